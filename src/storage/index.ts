/** The storage layer: the only code the server talks to S3 through (and imports the AWS SDK, lazily); the doctor probes the store on its own. */

export { stalledListing } from "./errors.ts";
export { createS3Storage } from "./s3-storage.ts";
export { createStoreStorages } from "./stores.ts";
export type * from "./types.ts";
export { visibleBuckets } from "./visible-buckets.ts";
