/**
 * Downloads in parallel ranges, handed on in order. On a real network one
 * connection carries about window / round-trip (the WAN model in the bench:
 * ~45 MiB/s); several ranged GETs at once multiply that, as rclone and the
 * AWS CLI do. The first GET asks for the first range and learns the size and
 * ETag from it; the other ranges are fetched PARALLEL_RANGES at a time, each
 * read whole into one buffer of its exact length, and yielded in order, so
 * the caller verifies, hashes and writes sequentially. Every range is pinned
 * to the first answer's ETag (and version): an object replaced mid-download
 * fails the call instead of mixing two objects.
 */
import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";
import { ActionableError, s3Uri } from "../errors.ts";
import { memoryPacer } from "../memory.ts";
import type { S3Handle } from "./client.ts";
import { toStorageError, type ErrorContext } from "./errors.ts";
import { verifiedBody } from "./integrity.ts";

const MiB = 1024 * 1024;
/**
 * Each range fetches this much; at most PARALLEL_RANGES are in flight, each
 * into one of PARALLEL_RANGES + 1 reused buffers. Measured on 256 MiB through
 * the WAN model (history.md): 8 MiB ranges peaked at 217-228 MB, 4 MiB with
 * reused buffers at 149-164 MB, and with a GC every 16 MiB at 131-133 MB.
 */
export const RANGE_SIZE = 4 * MiB;
export const PARALLEL_RANGES = 4;
/** The network's buffers for every range are garbage once copied: collect them in step (memory.ts). */
const pace = memoryPacer(16 * MiB);

type Params = { Bucket: string; Key: string; VersionId?: string };

/** The first GET of a download: the first range (the whole object when it is small). */
export async function firstRange(s3: S3Handle, params: Params, options: { abortSignal?: AbortSignal; requestTimeout?: number }): Promise<GetObjectCommandOutput> {
  const { client, sdk } = s3;
  try {
    return await client.send(new sdk.GetObjectCommand({ ...params, Range: `bytes=0-${RANGE_SIZE - 1}` }), options);
  } catch (err) {
    // A range on an empty object is unsatisfiable (416): fetch it whole, it is empty.
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 416) throw err;
    return client.send(new sdk.GetObjectCommand(params), options);
  }
}

/** The whole object: `first`'s body while the next ranges are already being fetched, then the ranges in order. */
export async function* inOrder(s3: S3Handle, params: Params, first: GetObjectCommandOutput, total: number, ctx: ErrorContext, signal?: AbortSignal, received?: (bytes: number) => void): AsyncIterable<Uint8Array> {
  const { client, sdk } = s3;
  const pinned = { ...params, ...(first.ETag ? { IfMatch: first.ETag } : {}), ...(first.VersionId ? { VersionId: first.VersionId } : {}) };
  // Stops the ranges in flight when the consumer stops early, fails, or the caller cancels.
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const pending: Promise<Uint8Array>[] = [];
  // PARALLEL_RANGES + 1 buffers, reused: a yielded range is written before the generator resumes.
  const pool: Buffer[] = [];
  const take = (length: number) => (pool.pop() ?? Buffer.allocUnsafe(RANGE_SIZE)).subarray(0, length);
  // Where the first answer ended: its Content-Range says (a proxy may have dropped its Content-Length).
  const firstEnd = Number(first.ContentRange?.match(/^bytes \d+-(\d+)\//)?.[1] ?? (first.ContentLength ?? 0) - 1);
  let next = firstEnd + 1;
  const launch = () => {
    while (pending.length < PARALLEL_RANGES && next < total) {
      const start = next;
      const end = Math.min(total, start + RANGE_SIZE) - 1;
      next = end + 1;
      const range = client
        .send(new sdk.GetObjectCommand({ ...pinned, Range: `bytes=${start}-${end}` }), { abortSignal: stop.signal })
        .then((out) => collect(out.Body as AsyncIterable<Uint8Array> | undefined, take(end - start + 1), ctx, received))
        .catch((err: unknown) => {
          throw rangeError(err, ctx);
        });
      range.catch(() => {}); // awaited in order below; never an unhandled rejection meanwhile
      pending.push(range);
    }
  };
  try {
    launch();
    if (first.Body) yield* counted(first.Body as AsyncIterable<Uint8Array>, received);
    while (pending.length > 0) {
      const chunk = await pending.shift()!;
      launch();
      yield chunk;
      pool.push(Buffer.from(chunk.buffer, chunk.byteOffset, RANGE_SIZE));
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    stop.abort();
  }
}

function rangeError(err: unknown, ctx: ErrorContext): ActionableError {
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status === 412) {
    return new ActionableError({
      resource: s3Uri(ctx.bucket ?? "", ctx.key),
      code: "ObjectChanged",
      status,
      message: "The object was replaced while it was being downloaded; nothing was kept.",
      hint: "download it again.",
      retryable: true,
    });
  }
  return toStorageError(err, ctx);
}

/** Reads a range's body into `out` (its exact length); a short or long body is IncompleteBody. */
async function collect(body: AsyncIterable<Uint8Array> | undefined, out: Buffer, ctx: ErrorContext, received?: (bytes: number) => void): Promise<Uint8Array> {
  let filled = 0;
  for await (const chunk of verifiedBody(body, { length: out.length, md5: undefined, checksums: [] }, ctx)) {
    out.set(chunk, filled);
    filled += chunk.length;
    received?.(chunk.length);
    pace(chunk.length);
  }
  return out;
}

/** Passes a body through, telling `received` each chunk's size as it arrives. */
export async function* counted(body: AsyncIterable<Uint8Array>, received?: (bytes: number) => void): AsyncIterable<Uint8Array> {
  for await (const chunk of body) {
    received?.(chunk.length);
    yield chunk;
  }
}
