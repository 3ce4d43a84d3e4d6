/**
 * A ranged GET of an object pinned to its ETag, without the SDK's middleware
 * (quick-requests.ts says why that matters): the reads of a Parquet
 * object's column chunks and of an object's windows, dozens per query, each
 * small, read whole; and a download's ranges after its first, streamed (up
 * to 32 for 256 MiB from a far store). Tried only for a key the SDK would
 * address the same way (no dot segments). Anything but a 206 of exactly the
 * range asked for (an error, a changed object, a redirect, a store that
 * ignores ranges, a network failure) answers undefined, and the caller sends
 * the SDK's GET, whose answer is the one reported.
 */
import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";
import type { S3Handle } from "./client.ts";
import { asGetOutput } from "./quick-requests.ts";
import { bounded, EMPTY_SHA256, readExactly, sendQuick } from "./quick-transport.ts";

const DOT_SEGMENT = /(^|\/)\.\.?(\/|$)/;

export interface PinnedRange {
  bucket: string;
  key: string;
  versionId?: string;
  /** The ETag the bytes must be of (If-Match). */
  etag: string;
  offset: number;
  length: number;
}

/** Whether a ranged read may take the quick GET. */
export const quickRangeFits = (range: PinnedRange) => range.length > 0 && !DOT_SEGMENT.test(range.key);

/** The range's bytes, and the answer as the SDK's GET would give it (with its Content-Range); undefined: then send the SDK's GET. */
export async function quickRange(
  s3: S3Handle,
  range: PinnedRange,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<{ output: GetObjectCommandOutput; bytes: Uint8Array } | undefined> {
  const bound = bounded(signal, timeoutMs);
  try {
    const answer = await sendRange(s3, range, bound.signal);
    if (!answer) return undefined;
    // With its length said, the body is read by fetch into one buffer (fetch reads no more than that); else counted.
    const bytes =
      answer.headers.get("content-length") === String(range.length)
        ? new Uint8Array(await answer.arrayBuffer())
        : await readExactly(answer.body, range.length);
    if (bytes?.length !== range.length) return undefined;
    const output = { ...asGetOutput(answer.headers, bytes), ContentRange: answer.headers.get("content-range")! };
    return { output, bytes };
  } catch {
    // Whatever went wrong, the SDK's GET tries again and reports it (a cancel: it sees the aborted signal too).
    return undefined;
  } finally {
    bound.done();
  }
}

/**
 * The range's body as it streams (a download's ranges: transfer/ranged.ts), on the download's own signal, which
 * `timeoutMs` bounds only until the answer's head has come (the body's pace is the download's idle timer's);
 * undefined: then send the SDK's GET.
 */
export async function quickRangeBody(
  s3: S3Handle,
  range: PinnedRange,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<ReadableStream<Uint8Array> | undefined> {
  const head = new AbortController();
  const timer = setTimeout(() => head.abort(new Error("timed out")), timeoutMs);
  try {
    return (await sendRange(s3, range, AbortSignal.any([signal, head.signal])))?.body ?? undefined;
  } catch {
    // As quickRange: the SDK's GET tries again and reports what went wrong.
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Sends the GET of `range`, pinned to its ETag: its answer when it is a 206 of exactly that range, else undefined (any other answer's body cancelled). */
async function sendRange(s3: S3Handle, range: PinnedRange, signal: AbortSignal): Promise<Response | undefined> {
  const last = range.offset + range.length - 1;
  const answer = await sendQuick(
    s3,
    {
      method: "GET",
      bucket: range.bucket,
      key: range.key,
      headers: {
        range: `bytes=${range.offset}-${last}`,
        "if-match": range.etag.startsWith('"') ? range.etag : `"${range.etag}"`,
        "x-amz-content-sha256": EMPTY_SHA256,
      },
      ...(range.versionId ? { query: { versionId: range.versionId } } : {}),
    },
    signal,
  );
  if (!answer) return undefined;
  if (answer.status !== 206 || !answer.headers.get("content-range")?.startsWith(`bytes ${range.offset}-${last}/`)) {
    await answer.body?.cancel().catch(() => {});
    return undefined;
  }
  return answer;
}
