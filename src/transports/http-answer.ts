/**
 * How an HTTP answer leaves the server. A body is handed to Bun in slices,
 * one per pull, so it is taken only as fast as the client reads: the call's
 * memory reservation ends when the last slice is taken or the client is gone
 * (not when the handler returns), a client that stops reading is cut off
 * after SLOW_READER_MS, and a stream still waiting for its answer when the
 * server stops can be given a last message instead.
 */

/** What one pull hands to the socket. */
export const SLICE_BYTES = 64 * 1024;
/** How long a finished answer waits for a client that takes nothing. */
export const SLOW_READER_MS = 30_000;

export interface AnswerOptions {
  /** Called once: the body was all taken, the client left, or it was cut off. */
  onEnd(how: "written" | "gone" | "slow reader"): void;
  /** Resolves with a last message to send (and end with) while the body is still waiting for its source. */
  interrupt?: Promise<Uint8Array>;
}

export function answerBody(source: ReadableStream<Uint8Array>, options: AnswerOptions): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let rest: Uint8Array | undefined;
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const end = (how: "written" | "gone" | "slow reader") => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    options.onEnd(how);
  };
  const interrupted = options.interrupt?.then((bytes) => ({ interrupt: bytes }));
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        clearTimeout(timer);
        if (!rest || rest.length === 0) {
          const next = await (interrupted ? Promise.race([reader.read(), interrupted]) : reader.read());
          if ("interrupt" in next) {
            controller.enqueue(next.interrupt);
            controller.close();
            void reader.cancel().catch(() => {});
            end("written");
            return;
          }
          if (next.done) {
            controller.close();
            end("written");
            return;
          }
          rest = next.value;
        }
        controller.enqueue(rest.subarray(0, SLICE_BYTES));
        rest = rest.subarray(SLICE_BYTES);
        // The client has this slice's worth of time to ask for the next one.
        timer = setTimeout(() => {
          rest = undefined;
          controller.error(new Error("the client stopped reading its answer"));
          void reader.cancel().catch(() => {});
          end("slow reader");
        }, SLOW_READER_MS);
        timer.unref?.();
      },
      cancel() {
        rest = undefined;
        void reader.cancel().catch(() => {});
        end("gone");
      },
    },
    { highWaterMark: 0 },
  );
}

/** One JSON-RPC message as a server-sent event (what the SDK's stream carries). */
export function sseMessage(message: unknown): Uint8Array {
  return new TextEncoder().encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

/** Who waits for the shutdown's grace to end: one waiter per request, dropped when it is done (a promise shared by all would keep every answer reachable). */
export class GraceWaiters {
  readonly #waiters = new Set<() => void>();

  wait(): { ended: Promise<void>; forget(): void } {
    let fire!: () => void;
    const ended = new Promise<void>((resolve) => (fire = resolve));
    this.#waiters.add(fire);
    return { ended, forget: () => this.#waiters.delete(fire) };
  }

  /** The grace is over: every waiter is told, once. */
  over(): void {
    for (const fire of this.#waiters) fire();
    this.#waiters.clear();
  }
}
