/**
 * Tracks tool calls in flight so that shutdown (stdin closed, SIGINT, SIGTERM)
 * can cancel them and wait for their clean-up: temp files removed, multipart
 * uploads aborted, before the process exits.
 */
/**
 * The signals that end the server cleanly: SIGINT and SIGTERM, and SIGHUP,
 * which a closing terminal sends and the npm launcher forwards (by default
 * it would kill the process with no clean-up at all).
 */
export const SHUTDOWN_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export class CallTracker {
  private readonly stopping = new AbortController();
  private readonly running = new Set<Promise<unknown>>();

  /** A signal for one call: aborted by the client's cancel or by shutdown. */
  callSignal(clientSignal: AbortSignal): AbortSignal {
    return AbortSignal.any([clientSignal, this.stopping.signal]);
  }

  track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    const done = () => this.running.delete(work);
    work.then(done, done);
    return work;
  }

  /** Cancels every call and waits (at most `timeoutMs`) for their clean-up. */
  async shutdown(timeoutMs: number): Promise<void> {
    this.stopping.abort(Object.assign(new Error("The server is shutting down."), { name: "AbortError" }));
    const all = Promise.allSettled([...this.running]);
    await Promise.race([all, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref?.())]);
  }
}
