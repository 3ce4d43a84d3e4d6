/**
 * What a streamed upload request is made of (streamed-put.ts for one
 * PutObject, streamed-parts.ts for the parts of a multipart upload): a
 * request body fetch pulls from the source's own chunks, each freed once
 * fetch asks for the next; a timer that fails the request when nothing moves;
 * a refused answer as the SDK would have reported it.
 */
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import { releaseChunks } from "../../runtime/memory.ts";
import type { S3Handle } from "../requests/client.ts";
import { type QuickRequest, readText, sendQuick } from "../requests/quick-transport.ts";
import {
  type ChunkDigests,
  ChunkSigner,
  type NextBytes,
  SignedFrames,
  signedChunkHeaders,
} from "../requests/signed-chunks.ts";
import type { ChunkSeed } from "../requests/sigv4.ts";

export type Take = (position: number, max: number) => Promise<Uint8Array>;

interface BodyHooks {
  /** Fetch asked for more, or a chunk went out: the request is moving. */
  moving(): void;
  /** Reading the source failed: the request must stop (the error is the source's). */
  failed(err: unknown): void;
}

/**
 * `length` bytes of the source from `from` as a request body, the first
 * chunk already taken when given; signed chunk by chunk when `signing` is
 * given (signed-chunks.ts), else as they are. The source's bytes go as they
 * are held (a copy of every byte, in fresh memory, would be a large share of
 * the CPU), and what was handed over is freed when fetch asks for more: fetch
 * has taken it into its request buffer by then, and the copy's peak stays
 * flat (the copy between stores in `npm run bench`). Were fetch ever to keep
 * a chunk longer, the bytes sent would not be the source's and the store's
 * check (Content-MD5, a chunk's signature, or the part's ETag against our
 * MD5) would refuse them: an error, never a wrong object.
 */
function sourceBody(
  take: Take,
  from: number,
  length: number,
  first: Uint8Array | undefined,
  hooks: BodyHooks,
  resource: string,
  signing: ((next: NextBytes) => SignedFrames) | undefined,
): ReadableStream<Uint8Array> {
  let sent = 0;
  let handed: Uint8Array[] = [];
  let ahead = first;
  const next: NextBytes = async () => {
    const chunk = ahead ?? (await take(from + sent, length - sent));
    ahead = undefined;
    if (chunk.length === 0)
      throw new ActionableError({
        resource,
        code: "IncompleteBody",
        message: `The source ended after ${from + sent} of ${from + length} bytes; nothing was stored.`,
        hint: "retry the call.",
        retryable: true,
      });
    sent += chunk.length;
    return chunk;
  };
  const frames = signing?.(next);
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        hooks.moving();
        try {
          releaseChunks(handed);
          const frame = frames ? await frames.nextFrame() : { pieces: [await next()], spent: undefined };
          handed = frame?.spent ?? frame?.pieces ?? [];
          for (const piece of frame?.pieces ?? []) controller.enqueue(piece);
          if (frames ? !frame : sent >= length) controller.close();
          hooks.moving();
        } catch (err) {
          hooks.failed(err);
          controller.error(err);
        }
      },
    },
    { highWaterMark: 0 },
  );
}

/** A timer that calls `onIdle` when `arm` is not called again within `ms`. */
function idleTimer(ms: number, onIdle: () => void): { arm(): void; stop(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    arm() {
      clearTimeout(timer);
      timer = setTimeout(onIdle, ms);
    },
    stop() {
      clearTimeout(timer);
    },
  };
}

export interface StreamedOptions {
  signal: AbortSignal | undefined;
  /** Nothing for this long fails the request. */
  idleMs: number;
  /**
   * A chunk was taken from the source for this request, `total` bytes so far: they are gone from there, whether the
   * request then carries them or fails.
   */
  onTaken?: (chunk: Uint8Array, total: number) => void;
  /** The request failed because reading the source did (the error thrown is the source's). */
  onSourceFailure?: () => void;
  /**
   * Sign the body chunk by chunk (signed-chunks.ts) with these digests, which
   * `onTaken` feeds every byte taken; else it goes unsigned, as it is.
   */
  signedBy?: ChunkDigests;
}

/**
 * Sends one streamed request and waits for its 200. Nothing for `idleMs`
 * (no chunk asked for, or no answer once all was sent) fails it with a
 * Timeout naming `bucket/key`; a failed read of the source fails it with the
 * source's error; a refusal is reported as the SDK would have reported it.
 */
export async function sendStreamed(
  s3: S3Handle,
  request: Omit<QuickRequest, "body">,
  take: Take,
  from: number,
  length: number,
  { signal, idleMs, onTaken, onSourceFailure, signedBy }: StreamedOptions,
): Promise<{ headers: Headers }> {
  const resource = s3Uri(request.bucket, request.key);
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort, { once: true });
  const idle = idleTimer(idleMs, () =>
    stop.abort(
      new ActionableError({
        resource,
        code: "Timeout",
        message: `The destination stopped taking the upload (nothing for ${idleMs} ms); nothing was stored.`,
        hint: "retry later.",
        retryable: true,
      }),
    ),
  );
  // The source's own error (a failed read) is the one to report, not fetch's word for the broken body.
  let readFailure: { err: unknown } | undefined;
  let taken = 0;
  const counted: Take = async (position, max) => {
    const chunk = await take(position, max);
    taken += chunk.length;
    onTaken?.(chunk, taken);
    return chunk;
  };
  try {
    // The first bytes are waited for before the request goes: a store is not kept waiting on a slow source. A part
    // waiting for its first bytes stops when the upload does (another part failed), not when the bytes come.
    const first = await untilAborted(counted(from, length), stop.signal).catch((err: unknown) => {
      if (!stop.signal.aborted) readFailure = { err };
      throw err;
    });
    const hooks: BodyHooks = {
      moving: () => idle.arm(),
      failed: (err) => {
        readFailure ??= { err };
        stop.abort(err);
      },
    };
    // Signed, the body is made once the request's own signature, which its chunks' continue, is known.
    const body = signedBy
      ? (seed: ChunkSeed) =>
          sourceBody(
            counted,
            from,
            length,
            first,
            hooks,
            resource,
            (next) => new SignedFrames(length, new ChunkSigner(seed), signedBy, next),
          )
      : sourceBody(counted, from, length, first, hooks, resource, undefined);
    const headers = signedBy ? signedChunkHeaders(length) : { "content-length": String(length) };
    idle.arm();
    const answer = await sendQuick(s3, { ...request, headers: { ...request.headers, ...headers }, body }, stop.signal);
    // The callers asked quickAddressable first: only a store that lost its credentials since ends here.
    if (!answer) throw { name: "CredentialsProviderError", message: "no credentials to sign the upload with" };
    if (answer.status === 200) {
      await answer.body?.cancel().catch(() => {});
      return { headers: answer.headers };
    }
    throw refusal(answer.status, (await readText(answer.body, 64 * 1024).catch(() => undefined)) ?? "");
  } catch (err) {
    if (readFailure) {
      onSourceFailure?.();
      throw readFailure.err;
    }
    if (stop.signal.aborted && stop.signal.reason instanceof ActionableError) throw stop.signal.reason;
    throw err;
  } finally {
    idle.stop();
    signal?.removeEventListener("abort", onAbort);
  }
}

/** `work`, or the signal's reason once it is aborted (`work` is left to settle on its own). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** A refused request as the SDK would have reported it (its code and message from the error document). */
function refusal(status: number, text: string): unknown {
  const field = (name: string) => text.match(new RegExp(`<${name}>([^<]*)</${name}>`))?.[1];
  return {
    name: field("Code") ?? "UnknownError",
    Code: field("Code"),
    message: field("Message") ?? "",
    $metadata: { httpStatusCode: status },
  };
}
