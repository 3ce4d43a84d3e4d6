/**
 * Progress of one transfer, for a client that asked for it with
 * `_meta.progressToken`: `notifications/progress` with bytes done, the total
 * and a short message, at most every 250 ms (each byte count that moves after
 * that is sent, so at least every 2 s while bytes move), and never after the
 * call has ended or been cancelled. A progress notification also resets the
 * client's request timeout where the client supports it.
 */

/** Reports bytes done so far (a running total, not a delta). */
export type ProgressSink = (done: number) => void;

/** What a job of many items has done, each count apart (a job's status shows them; a notification has one number). */
export interface ProgressFigures {
  doneObjects?: number;
  totalObjects?: number;
  doneBytes?: number;
  totalBytes?: number;
}

export interface ProgressReporter {
  /** A sink for a transfer of `total` bytes (undefined when unknown), described by `what`. */
  start(total: number | undefined, what: string): ProgressSink;
  /**
   * For a job of many items: `progress` must only grow; `total` may grow as
   * more of the job becomes known; `message` says it in words. Rate-limited
   * like a transfer; `final` is always sent. `figures` says what `progress`
   * counts (without them: objects).
   */
  report(
    progress: number,
    total: number | undefined,
    message: string,
    final?: boolean,
    figures?: ProgressFigures,
  ): void;
  /** No notification is sent after this (the call answered, failed or was cancelled). */
  close(): void;
}

const MIN_INTERVAL_MS = 250;

export function progressReporter(
  send: (params: { progress: number; total?: number; message: string }) => Promise<void>,
  signal: AbortSignal,
  now = () => performance.now(),
): ProgressReporter {
  let open = true;
  let last = -Infinity;
  let sent = -Infinity;
  return {
    start(total, what) {
      return (done) => {
        if (!open || signal.aborted) return;
        const t = now();
        const finished = total !== undefined && done >= total;
        if (t - last < MIN_INTERVAL_MS && !finished) return;
        last = t;
        const percent = total ? ` (${Math.floor((done / total) * 100)}%)` : "";
        void send({
          progress: done,
          ...(total !== undefined ? { total } : {}),
          message: `${what}: ${done} of ${total ?? "?"} bytes${percent}`,
        }).catch(() => {});
      };
    },
    report(progress, total, message, final = false) {
      if (!open || signal.aborted || progress <= sent) return;
      const t = now();
      if (t - last < MIN_INTERVAL_MS && !final) return;
      last = t;
      sent = progress;
      void send({ progress, ...(total !== undefined ? { total } : {}), message }).catch(() => {});
    },
    close() {
      open = false;
    },
  };
}

/** For calls without a progress token: reports nothing. */
export const NO_PROGRESS: ProgressReporter = { start: () => () => {}, report() {}, close() {} };
