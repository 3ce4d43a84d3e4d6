import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";
import { ActionableError, s3Uri } from "../errors.ts";
import { checkedBody, metaOf } from "./bodies.ts";
import type { S3Handle } from "./client.ts";
import { toStorageError, type ErrorContext } from "./errors.ts";
import type { ObjectAddress, ObjectMeta } from "./types.ts";

const MiB = 1024 * 1024;
/** Each ranged GET after the first fetches this much. */
export const RANGE_SIZE = 8 * MiB;
/** Ranged GETs in flight beside the streamed first one; at most this many ranges are held in memory. */
export const PARALLEL_RANGES = 4;

/**
 * Opens an object for a download. The first GET asks for the first range and
 * learns the size from it; a larger object's other ranges are fetched
 * PARALLEL_RANGES at a time (a single S3 connection is often the bottleneck:
 * rclone does the same above 250 MiB) and handed on in order, so the caller
 * writes and hashes sequentially. Every range is pinned to the first answer's
 * ETag (and version), so an object replaced mid-download fails the call
 * instead of mixing two versions.
 */
export async function openObjectBody(s3: S3Handle, addr: ObjectAddress, ctx: ErrorContext, signal?: AbortSignal): Promise<{ meta: ObjectMeta; body: AsyncIterable<Uint8Array> }> {
  const { client, sdk } = s3;
  const params = { Bucket: addr.bucket, Key: addr.key, ...(addr.versionId ? { VersionId: addr.versionId } : {}) };
  let first: GetObjectCommandOutput;
  try {
    first = await client.send(new sdk.GetObjectCommand({ ...params, Range: `bytes=0-${RANGE_SIZE - 1}` }), { abortSignal: signal });
  } catch (err) {
    // A range on an empty object is unsatisfiable (416): fetch it whole, it is empty.
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 416) throw err;
    first = await client.send(new sdk.GetObjectCommand(params), { abortSignal: signal });
  }
  const meta = metaOf(first);
  const firstBody = checkedBody(first.Body as AsyncIterable<Uint8Array> | undefined, first.ContentLength, ctx);
  if (first.ContentRange === undefined || meta.size <= RANGE_SIZE) return { meta, body: firstBody };
  const pinned = { ...params, ...(first.ETag ? { IfMatch: first.ETag } : {}), ...(first.VersionId ? { VersionId: first.VersionId } : {}) };
  const fetchRange = async (start: number, end: number, rangeSignal: AbortSignal): Promise<Uint8Array> => {
    const out = await client.send(new sdk.GetObjectCommand({ ...pinned, Range: `bytes=${start}-${end}` }), { abortSignal: rangeSignal });
    return collect(out.Body as AsyncIterable<Uint8Array> | undefined, end - start + 1, ctx);
  };
  return { meta, body: inOrder(firstBody, meta.size, fetchRange, ctx, signal) };
}

async function* inOrder(
  firstBody: AsyncIterable<Uint8Array>,
  size: number,
  fetchRange: (start: number, end: number, signal: AbortSignal) => Promise<Uint8Array>,
  ctx: ErrorContext,
  signal?: AbortSignal,
): AsyncIterable<Uint8Array> {
  // Stops the ranges in flight when the consumer stops early, fails, or the caller cancels.
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const pending: Promise<Uint8Array>[] = [];
  let next = RANGE_SIZE;
  const launch = () => {
    while (pending.length < PARALLEL_RANGES && next < size) {
      const start = next;
      const end = Math.min(size, start + RANGE_SIZE) - 1;
      next = end + 1;
      const range = fetchRange(start, end, stop.signal).catch((err: unknown) => {
        throw toRangeError(err, ctx);
      });
      range.catch(() => {}); // awaited in order below; never an unhandled rejection meanwhile
      pending.push(range);
    }
  };
  try {
    launch();
    yield* firstBody;
    while (pending.length > 0) {
      const chunk = await pending.shift()!;
      launch();
      yield chunk;
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    stop.abort();
  }
}

function toRangeError(err: unknown, ctx: ErrorContext): ActionableError {
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status === 412) {
    return new ActionableError({
      resource: s3Uri(ctx.bucket ?? "", ctx.key),
      code: "ObjectChanged",
      status,
      message: "The object was replaced while it was being downloaded; nothing was written.",
      hint: "download it again.",
      retryable: true,
    });
  }
  return toStorageError(err, ctx);
}

/** Reads a range's body into one buffer of its exact expected length. */
async function collect(body: AsyncIterable<Uint8Array> | undefined, length: number, ctx: ErrorContext): Promise<Uint8Array> {
  const out = Buffer.allocUnsafe(length);
  let filled = 0;
  // Too many or too few bytes: checkedBody throws IncompleteBody at the end.
  for await (const chunk of checkedBody(body, length, ctx)) {
    const room = length - filled;
    out.set(room < chunk.length ? chunk.subarray(0, room) : chunk, filled);
    filled += Math.min(room, chunk.length);
  }
  return out;
}
