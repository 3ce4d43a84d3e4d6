/**
 * The overall deadline of a call that is not a streaming transfer: whatever
 * the store does (never answer, trickle, make the SDK retry), the call ends
 * within it, so the model sees our error before the client gives up (most
 * clients wait 60 s). Transfers have an idle timeout instead.
 */
import { ActionableError } from "../../runtime/errors.ts";

export interface Deadline {
  /** Aborted by the caller or at the deadline. */
  signal: AbortSignal;
  /** The time-to-first-byte limit for each attempt, so retries fit in the deadline. */
  attemptTimeoutMs: number;
  /** True when the deadline (not the caller) ended the call. */
  expired(): boolean;
  /** Runs `work`, rejecting at the deadline even if the work does not notice the abort. */
  race<T>(work: Promise<T>): Promise<T>;
  dispose(): void;
}

export function startDeadline(ms: number, attempts: number, caller?: AbortSignal): Deadline {
  const timer = new AbortController();
  const handle = setTimeout(() => timer.abort(Object.assign(new Error("deadline"), { name: "AbortError" })), ms);
  const signal = caller ? AbortSignal.any([caller, timer.signal]) : timer.signal;
  return {
    signal,
    attemptTimeoutMs: Math.max(1_000, Math.floor(ms / Math.max(1, attempts))),
    expired: () => timer.signal.aborted && !caller?.aborted,
    race<T>(work: Promise<T>) {
      return new Promise<T>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        if (signal.aborted) onAbort();
        signal.addEventListener("abort", onAbort, { once: true });
        work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
      });
    },
    dispose: () => clearTimeout(handle),
  };
}

export function deadlineError(resource: string, ms: number): ActionableError {
  return new ActionableError({
    resource,
    code: "Timeout",
    message: `The store did not finish answering within ${ms / 1000} s (the operation deadline, STORE_OPERATION_TIMEOUT_MS).`,
    hint: "retry later; if it keeps happening the endpoint is overloaded or is not an S3 store (check STORE_ENDPOINT_URL). The user can raise STORE_OPERATION_TIMEOUT_MS.",
    retryable: true,
  });
}
