/**
 * Downloads: one stream from a near store, parallel ranges from a far one.
 *
 * On a real network one connection carries about window / round-trip (the
 * WAN model in the bench: ~25 MiB/s); several ranged GETs at once multiply
 * that, as rclone and the AWS CLI do. On loopback or a LAN one stream is
 * already as fast as the store sends, and ranges only add requests, copies
 * and garbage (256 MiB here: ~1.0 s as one stream, 1.2-1.8 s in ranges). So
 * the first GET asks for the first range, and how fast it streams in
 * decides: near → the rest in one more GET; far → the rest PARALLEL_RANGES
 * at a time, each read whole into a reused buffer and yielded in order, so
 * the caller verifies, hashes and writes sequentially either way. Every GET
 * after the first is pinned to the first answer's ETag (and version): an
 * object replaced mid-download fails the call instead of mixing two objects.
 * Every body has an idle timer: a store that stops sending fails the call.
 */
import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";
import { ActionableError, s3Uri } from "../errors.ts";
import { memoryPacer } from "../memory.ts";
import { isWhole } from "./bodies.ts";
import { fetchClientFor, type S3Handle } from "./client.ts";
import { toStorageError, type ErrorContext } from "./errors.ts";
import { verifiedBody } from "./integrity.ts";

const MiB = 1024 * 1024;
/**
 * Each range fetches this much; at most PARALLEL_RANGES are in flight, each
 * into one of PARALLEL_RANGES + 1 reused buffers. Measured on 256 MiB through
 * the WAN model (history.md): 8 MiB ranges peaked at 217-228 MB, 4 MiB with
 * reused buffers at 149-164 MB, and with a GC every 16 MiB at 131-133 MB.
 */
export const RANGE_SIZE = 2 * MiB;
export const PARALLEL_RANGES = 8;
/**
 * The first range streaming in at this rate or more, timed from its first
 * byte (so a cold process's first request, JIT and connection set-up, does
 * not count), means a near store: one stream is fastest there. Loopback: 2 MiB
 * in 1-8 ms; the WAN model: 30-40 ms (512 KiB per 10 ms delivery); the
 * internet: window / round trip, rarely 100 MiB/s on one connection.
 */
const NEAR_STORE_BYTES_PER_MS = (100 * MiB) / 1000;
/** The network's buffers for every range are garbage once copied: collect them in step (memory.ts). */
const pace = memoryPacer(16 * MiB);

type Params = { Bucket: string; Key: string; VersionId?: string };
type Body = AsyncIterable<Uint8Array> & { destroy?(): void; cancel?(): Promise<void> };

export interface DownloadOptions {
  signal?: AbortSignal;
  /** Time to each answer's headers. */
  requestTimeout: number;
  /** Longest wait for the next bytes of a body. */
  idleTimeout: number;
}

export interface Download {
  /** The first answer: the first range, or the whole object when it is small or the store ignored Range. */
  first: GetObjectCommandOutput;
  /** True when `first` is the whole object. */
  whole: boolean;
  /** The whole object in order, `total` bytes; `received` hears of bytes as they arrive. */
  body(total: number, ctx: ErrorContext, received?: (bytes: number) => void): AsyncIterable<Uint8Array>;
  /** Drops the download unread: every request of it stops. */
  discard(): void;
}

const statusOf = (err: unknown) => (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

/** Sends the first GET; the rest is fetched as `body` is read. */
export async function openDownload(s3: S3Handle, params: Params, options: DownloadOptions): Promise<Download> {
  const client = fetchClientFor(s3, params.Key);
  // Stops every request of this download: the caller's cancel, an idle body, an early stop or the end.
  const stop = new AbortController();
  const onAbort = () => stop.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const finish = () => {
    options.signal?.removeEventListener("abort", onAbort);
    stop.abort();
  };
  const get = (extra: { Range?: string; IfMatch?: string; VersionId?: string }) =>
    client.send(new s3.sdk.GetObjectCommand({ ...params, ...extra }), { abortSignal: stop.signal, requestTimeout: options.requestTimeout });
  let first: GetObjectCommandOutput;
  try {
    try {
      first = await get({ Range: `bytes=0-${RANGE_SIZE - 1}` });
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

  async function* body(total: number, ctx: ErrorContext, received?: (bytes: number) => void): AsyncIterable<Uint8Array> {
    // Where the first answer ended: its Content-Range says (a proxy may have dropped its Content-Length).
    const firstEnd = Number(first.ContentRange?.match(/^bytes \d+-(\d+)\//)?.[1] ?? (first.ContentLength ?? 0) - 1);
    const pinned = { ...(first.ETag ? { IfMatch: first.ETag } : {}), ...(first.VersionId ? { VersionId: first.VersionId } : {}) };
    const ranges = new Ranges((start, end) => get({ ...pinned, Range: `bytes=${start}-${end}` }), idle, ctx, received);
    let mode: "probing" | "near" | "far" = whole || firstEnd + 1 >= total ? "near" : "probing";
    // Bytes after the first chunk, and when that chunk came.
    let timed = 0;
    let firstByteAt: number | undefined;
    const decide = (): "near" | "far" => {
      // The whole first range in one chunk: it was all there at once.
      const near = timed === 0 || (performance.now() - (firstByteAt ?? 0)) * NEAR_STORE_BYTES_PER_MS < timed;
      if (!near) ranges.launch(firstEnd + 1, total);
      return near ? "near" : "far";
    };
    try {
      for await (const chunk of idle.guard(first.Body as Body | undefined)) {
        received?.(chunk.length);
        if (firstByteAt === undefined) firstByteAt = performance.now();
        else timed += chunk.length;
        yield chunk;
      }
      if (mode === "probing") mode = decide();
      if (mode === "far") {
        yield* ranges.inOrder();
      } else if (firstEnd + 1 < total) {
        const rest = await get({ ...pinned, Range: `bytes=${firstEnd + 1}-${total - 1}` }).catch((err: unknown) => {
          throw rangeError(err, ctx);
        });
        for await (const chunk of idle.guard(rest.Body as Body | undefined)) {
          received?.(chunk.length);
          yield chunk;
        }
      }
    } catch (err) {
      // An idle body aborts all requests; report the stall, not the aborts it caused.
      throw idle.stalled ?? err;
    } finally {
      finish();
    }
  }

  return {
    first,
    whole,
    body,
    discard: () => {
      const raw = first.Body as Body | undefined;
      raw?.destroy?.();
      raw?.cancel?.().catch(() => {});
      finish();
    },
  };
}

/** Fails a body that sends nothing for `ms` (a store that stopped), aborting every request of its download. */
class IdleTimer {
  stalled: Error | undefined;

  constructor(
    private readonly ms: number,
    private readonly stop: AbortController,
  ) {}

  async *guard(body: Body | undefined): AsyncIterable<Uint8Array> {
    if (!body) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      timer = setTimeout(() => {
        this.stalled ??= Object.assign(new Error(`the store sent nothing for ${this.ms} ms`), { name: "TimeoutError" });
        this.stop.abort(this.stalled);
      }, this.ms);
    };
    try {
      arm();
      for await (const chunk of body) {
        clearTimeout(timer);
        // Not armed while the consumer holds the chunk: a slow disk is not an idle store.
        yield chunk;
        arm();
      }
    } catch (err) {
      throw this.stalled ?? err;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The ranges after the first, PARALLEL_RANGES in flight, handed on in order. */
class Ranges {
  private readonly pending: Promise<Uint8Array>[] = [];
  // PARALLEL_RANGES + 1 buffers, reused: a yielded range is written before the generator resumes.
  private readonly pool: Buffer[] = [];
  private next = 0;
  private total = 0;

  constructor(
    private readonly get: (start: number, end: number) => Promise<GetObjectCommandOutput>,
    private readonly idle: IdleTimer,
    private readonly ctx: ErrorContext,
    private readonly received?: (bytes: number) => void,
  ) {}

  /** Starts fetching bytes `from` up to `total`. */
  launch(from: number, total: number): void {
    this.next = from;
    this.total = total;
    this.fill();
  }

  async *inOrder(): AsyncIterable<Uint8Array> {
    while (this.pending.length > 0) {
      const chunk = await this.pending.shift()!;
      this.fill();
      yield chunk;
      this.pool.push(Buffer.from(chunk.buffer, chunk.byteOffset, RANGE_SIZE));
    }
  }

  private fill(): void {
    while (this.pending.length < PARALLEL_RANGES && this.next < this.total) {
      const start = this.next;
      const end = Math.min(this.total, start + RANGE_SIZE) - 1;
      this.next = end + 1;
      const out = (this.pool.pop() ?? Buffer.allocUnsafe(RANGE_SIZE)).subarray(0, end - start + 1);
      const range = this.get(start, end)
        .then((answer) => this.collect(answer.Body as Body | undefined, out))
        .catch((err: unknown) => {
          throw this.idle.stalled ?? rangeError(err, this.ctx);
        });
      range.catch(() => {}); // awaited in order; never an unhandled rejection meanwhile
      this.pending.push(range);
    }
  }

  /** Reads a range's body into `out` (its exact length); a short or long body is IncompleteBody. */
  private async collect(body: Body | undefined, out: Buffer): Promise<Uint8Array> {
    let filled = 0;
    for await (const chunk of verifiedBody(this.idle.guard(body), { length: out.length, md5: undefined, checksums: [] }, this.ctx)) {
      out.set(chunk, filled);
      filled += chunk.length;
      this.received?.(chunk.length);
      pace(chunk.length);
    }
    return out;
  }
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
