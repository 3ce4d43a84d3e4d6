/** Limits of the reading tools that the resources share (mcp/resources.ts): here, so reading them loads no tool module. */

/** 1 MB in the spec, read as 1 MiB. */
export const DEFAULT_MAX_CONTENT_SIZE = 1_048_576;
/** The most one read may return into the conversation: 10 MiB. Larger → download mode. */
export const MAX_CONTENT_SIZE_CAP = 10_485_760;
/** The most buckets one answer lists (AWS accounts may now hold a million; a page is what one answer holds). */
export const MAX_BUCKETS = 1000;
