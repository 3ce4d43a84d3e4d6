/**
 * Downloads: one stream from a near store, parallel ranges from a far one,
 * every piece handed on at its offset as it arrives.
 *
 * On a real network one connection carries about window / round-trip (as
 * the WAN model in the bench does); several ranged GETs at once multiply
 * that, as rclone and the AWS CLI do. On loopback or a LAN one stream is
 * already as fast as the store sends. So the first GET asks for the first
 * range, and how fast it streams in decides (a near judgement confirmed by
 * how fast the store answers a HEAD: a busy process can time a far store's
 * range as near): near → the rest in one more GET;
 * far → the rest in RANGE_SIZE ranges, PARALLEL_RANGES at a time, each
 * started as soon as one ends. Pieces go to the caller's sink at their
 * offsets (a file written at positions), so no range waits for an earlier
 * one and nothing is held for reordering: memory is the pieces in flight.
 * Every GET after the first is pinned to the first answer's ETag (and
 * version): an object replaced mid-download fails the call instead of mixing
 * two objects. Every body has an idle timer and must be exactly the length
 * asked for; the whole object's MD5 and checksums need the bytes in order,
 * which the sink has (`check`).
 */
import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import { type ErrorContext, toStorageError } from "../errors.ts";
import { fetchClientFor, type S3Handle } from "../requests/client.ts";
import { quickRangeBody, quickRangeFits } from "../requests/quick-range.ts";
import type { PieceSink } from "../types.ts";
import { isWhole } from "./bodies.ts";
import { type Body, pump } from "./body-pump.ts";
import { IdleTimer } from "./idle-timer.ts";
import { stoppedSending } from "./integrity.ts";
import { FIRST_RANGE_SIZE, inParallel, missingSpans, PACED_RANGES, PARALLEL_RANGES } from "./ranges.ts";

const MiB = 1024 * 1024;
/**
 * The first range streaming in at this rate or more, timed from its first
 * byte (so a cold process's first request, JIT and connection set-up, does
 * not count), means a near store: one stream is fastest there. Loopback and a
 * LAN stream far above it; the WAN model and the internet (window / round
 * trip on one connection) far below.
 */
const NEAR_STORE_BYTES_PER_MS = (100 * MiB) / 1000;

type Params = { Bucket: string; Key: string; VersionId?: string };

export interface DownloadOptions {
  signal?: AbortSignal;
  /** Time to each answer's headers. */
  requestTimeout: number;
  /** Longest wait for the next bytes of a body. */
  idleTimeout: number;
  /** After the first range from a near store, ranges one after another instead of one stream (types.ts, ObjectDownloadOptions). */
  paced?: boolean;
  /**
   * Whether the store answers a request fast (nearness.ts), asked when the first range's timing cannot be trusted
   * alone: when it looked near, and for a paced download when it looked far.
   */
  answersFast?: () => Promise<boolean>;
}

export interface Download {
  /** The first answer: the first range, or the whole object when it is small or the store ignored Range. */
  first: GetObjectCommandOutput;
  /** True when `first` is the whole object. */
  whole: boolean;
  /** Where the bytes after the first answer start: what a resumed download may already have (undefined when whole). */
  restFrom: number | undefined;
  /**
   * Fetches the whole object (`total` bytes; undefined: as much as the first
   * answer sends) and hands every byte to `sink` exactly once, at its offset;
   * `received` hears of bytes as they arrive. Settles after every request
   * has ended: the sink is never called after.
   */
  deliver(
    total: number | undefined,
    ctx: ErrorContext,
    sink: PieceSink,
    received?: (bytes: number) => void,
    wantsMore?: () => boolean,
    have?: readonly [number, number][],
  ): Promise<void>;
  /** Drops the download unread: every request of it stops. */
  discard(): void;
}

type Get = (extra: { Range?: string; IfMatch?: string; VersionId?: string }) => Promise<GetObjectCommandOutput>;

const statusOf = (err: unknown) => (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

/** Sends the first GET; the rest is fetched by `deliver`. */
export async function openDownload(s3: S3Handle, params: Params, options: DownloadOptions): Promise<Download> {
  const client = fetchClientFor(s3, params.Key);
  // Stops every request of this download: the caller's cancel, an idle body, a failed range or the end.
  const stop = new AbortController();
  const onAbort = () => stop.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const finish = () => {
    options.signal?.removeEventListener("abort", onAbort);
    stop.abort();
  };
  const get: Get = (extra) =>
    client.send(new s3.sdk.GetObjectCommand({ ...params, ...extra }), {
      abortSignal: stop.signal,
      requestTimeout: options.requestTimeout,
    });
  let first: GetObjectCommandOutput;
  try {
    try {
      first = await get({ Range: `bytes=0-${FIRST_RANGE_SIZE - 1}` });
    } catch (err) {
      // A range on an empty object is unsatisfiable (416): fetch it whole, it is empty.
      if (statusOf(err) !== 416) throw err;
      first = await get({});
    }
  } catch (err) {
    finish();
    throw err;
  }
  const whole = isWhole(first);
  const idle = new IdleTimer(options.idleTimeout, stop);
  // No full collection in step (memory.ts's memoryPacer): each chunk is freed once written (pump), and what is left
  // is small enough for the runtime's own collections, so the peak stays flat in the object's size without. A forced
  // one stalls the event loop and hands back memory that is then faulted in again (docs/performance.md).

  async function deliver(
    total: number | undefined,
    ctx: ErrorContext,
    sink: PieceSink,
    received?: (bytes: number) => void,
    wantsMore: () => boolean = () => true,
    have: readonly [number, number][] = [],
  ): Promise<void> {
    // Where the first answer ends: its Content-Range says (a proxy may have dropped its Content-Length).
    const firstEnd = Number(first.ContentRange?.match(/^bytes \d+-(\d+)\//)?.[1] ?? (first.ContentLength ?? 0) - 1);
    const arrived = (bytes: number) => received?.(bytes);
    const later = { params, first, get, signal: stop.signal, timeoutMs: options.requestTimeout, ctx };
    const range = async (start: number, end: number) =>
      pump(await laterRange(s3, later, start, end), start, end - start + 1, sink, ctx, idle, arrived);
    try {
      // Timing the first range: bytes after its first chunk, and when that chunk came.
      let timed = 0;
      let firstByteAt: number | undefined;
      await pump(
        first.Body as Body | undefined,
        0,
        whole ? first.ContentLength : firstEnd + 1,
        sink,
        ctx,
        idle,
        (bytes) => {
          if (firstByteAt === undefined) firstByteAt = performance.now();
          else timed += bytes;
          arrived(bytes);
        },
      );
      if (whole || total === undefined || firstEnd + 1 >= total) return;
      // A resumed download fetches only what its temp file lacks (after the first range, always fetched).
      const spans = missingSpans(firstEnd + 1, total, have);
      if (spans.length === 0) return;
      // The whole first range in one chunk: it was all there at once.
      let near = timed === 0 || (performance.now() - (firstByteAt ?? 0)) * NEAR_STORE_BYTES_PER_MS < timed;
      // Timed from the first byte, a far store can look near: a process busy while the range comes in (its first
      // request's JIT, modules loading) finds the rest of it piled up in the socket and reads it at once. A round trip
      // cannot be shortened by that, so a near judgement is confirmed by how fast the store answers. A paced reader
      // asks either way: a loaded machine also times a near store's range below the rate, and far costs it memory.
      if ((near || options.paced) && options.answersFast) near = await options.answersFast();
      if (near && !options.paced) for (const [start, end] of spans) await range(start, end - 1);
      // A paced reader (a copy to another store) takes one range at a time from a near store: one stream ran ahead of the
      // upload, and what its connection buffered lifted the copy's peak (BENCH_ONLY=stores).
      // From a far one it starts with two and adds one (up to PACED_RANGES) whenever a range ends after the reader
      // waited a good part of the time for bytes: a near store that looked far (a loaded machine timing the first
      // range) then stays at a few ranges instead of PARALLEL_RANGES connections' worth of buffered bodies.
      else if (options.paced) await inParallel(spans, range, stop, near ? 1 : PACED_RANGES, near ? 1 : 2, wantsMore);
      else await inParallel(spans, range, stop, near ? 1 : PARALLEL_RANGES);
    } catch (err) {
      // An idle body aborts all requests; report the stall, not the aborts it caused.
      if (idle.stalled && !(err instanceof ActionableError && err.code === "IncompleteBody"))
        throw stoppedSending(ctx, options.idleTimeout);
      throw err;
    } finally {
      finish();
    }
  }

  return {
    first,
    whole,
    restFrom: whole
      ? undefined
      : Number(first.ContentRange?.match(/^bytes \d+-(\d+)\//)?.[1] ?? (first.ContentLength ?? 0) - 1) + 1,
    deliver,
    discard: () => {
      const raw = first.Body as Body | undefined;
      raw?.destroy?.();
      raw?.cancel?.().catch(() => {});
      finish();
    },
  };
}

/**
 * A range after the first, pinned to the first answer's ETag and version: a quick request, without the SDK's
 * middleware (quick-range.ts); anything but that range is asked again of the SDK, whose answer (a 412: the object
 * replaced) is the one reported.
 */
async function laterRange(
  s3: S3Handle,
  at: {
    params: Params;
    first: GetObjectCommandOutput;
    get: Get;
    signal: AbortSignal;
    timeoutMs: number;
    ctx: ErrorContext;
  },
  start: number,
  end: number,
): Promise<Body | undefined> {
  const { params, first } = at;
  const version = first.VersionId ? { versionId: first.VersionId } : {};
  const quick = first.ETag
    ? { bucket: params.Bucket, key: params.Key, etag: first.ETag, offset: start, length: end - start + 1, ...version }
    : undefined;
  const body = quick && quickRangeFits(quick) ? await quickRangeBody(s3, quick, at.signal, at.timeoutMs) : undefined;
  if (body) return body as Body;
  const pinned = {
    ...(first.ETag ? { IfMatch: first.ETag } : {}),
    ...(first.VersionId ? { VersionId: first.VersionId } : {}),
  };
  const answer = await at.get({ ...pinned, Range: `bytes=${start}-${end}` }).catch((err: unknown) => {
    throw rangeError(err, at.ctx);
  });
  return answer.Body as Body | undefined;
}

function rangeError(err: unknown, ctx: ErrorContext): ActionableError {
  if (statusOf(err) === 412) {
    return new ActionableError({
      resource: s3Uri(ctx.bucket ?? "", ctx.key),
      code: "ObjectChanged",
      status: 412,
      message: "The object was replaced while it was being downloaded; nothing was kept.",
      hint: "download it again.",
      retryable: true,
    });
  }
  return toStorageError(err, ctx);
}
