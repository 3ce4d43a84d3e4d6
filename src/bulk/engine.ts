/**
 * The one engine every bulk tool runs on (rclone's march-then-transfer and
 * s5cmd's worker pool, in small): a streamed source of items, a fixed number
 * of workers pulling from it (so nothing is read ahead of them: the source's
 * own page is the queue), a cheap `plan` that decides each item (unchanged,
 * unsafe, conflict, or an action), a limit on actions per call, one progress
 * reporter, cancellation, and a tally of outcomes. It knows nothing of S3,
 * files or MCP: the tools hand it closures.
 */
import { ActionableError, isAbortError } from "../runtime/errors.ts";
import { itemPacer } from "../runtime/memory.ts";
import type { Action, Outcome } from "./outcome.ts";
import type { Tally } from "./tally.ts";

export type { Action, Outcome } from "./outcome.ts";

/** Items settled between full collections (memory.ts). */
const ITEMS_PER_GC = 100;

export interface JobOptions<T> {
  items: AsyncIterable<T>;
  /** Decides an item without changing anything; errors become a "failed" outcome named `nameOf(item)`. */
  plan(item: T, signal: AbortSignal): Promise<Outcome | Action>;
  nameOf(item: T): string;
  /** Called for an item pulled but not planned (the job stopped): release what it holds. */
  dispose?(item: T): Promise<void>;
  /** Items worked on at once. */
  concurrency: number;
  /** Actions one call may take; the job stops taking items after that. */
  limit: number;
  dryRun: boolean;
  signal: AbortSignal;
  tally: Tally;
}

/** How a job ended: every item seen, the action limit reached, or cancelled. */
export type JobEnd = "complete" | "limit" | "cancelled";

export async function runJob<T>(job: JobOptions<T>): Promise<JobEnd> {
  const source = job.items[Symbol.asyncIterator]();
  let stop: JobEnd | "failed" | undefined;
  let sourceError: unknown;
  let actions = 0;
  const pace = itemPacer(ITEMS_PER_GC);
  const worker = async () => {
    while (stop === undefined) {
      if (job.signal.aborted) {
        stop = "cancelled";
        break;
      }
      // Pulls are queued by the generator itself: at most `concurrency` items are out at once.
      let next: IteratorResult<T>;
      try {
        next = await source.next();
      } catch (err) {
        // The source itself failed (the listing, the walk): no more items; the others finish theirs.
        sourceError ??= err;
        stop = "failed";
        break;
      }
      if (next.done) break;
      const item = next.value;
      if (stop !== undefined) {
        await job.dispose?.(item);
        break;
      }
      job.tally.seen();
      const outcome = await settle(job, item, () => {
        if (actions >= job.limit) {
          stop ??= "limit";
          return false;
        }
        actions++;
        return true;
      });
      if (outcome) job.tally.add(outcome);
      pace();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, job.concurrency) }, worker));
  } finally {
    await source.return?.(undefined);
  }
  if (job.signal.aborted) return "cancelled";
  if (stop === "failed") throw sourceError;
  return stop ?? "complete";
}

/** Plans and (unless a dry run) runs one item; undefined when the action limit held it back. */
async function settle<T>(job: JobOptions<T>, item: T, mayAct: () => boolean): Promise<Outcome | undefined> {
  const name = job.nameOf(item);
  try {
    const planned = await job.plan(item, job.signal);
    if (planned.kind !== "action") return planned;
    if (!mayAct()) {
      job.tally.heldBack();
      return undefined;
    }
    if (job.dryRun) {
      if (planned.alsoDeletes !== undefined) job.tally.removed(planned.alsoDeletes);
      return planned.bytes === 0 && planned.alsoDeletes !== undefined
        ? { kind: "ignored" }
        : { kind: "done", name: planned.name, bytes: planned.bytes };
    }
    return await planned.run(job.signal);
  } catch (err) {
    if (isAbortError(err) || job.signal.aborted) return undefined;
    return failure(name, err);
  } finally {
    await job.dispose?.(item);
  }
}

/** An error as a per-item failure: its code and a short message, never a stack. */
export function failure(name: string, err: unknown): Outcome {
  if (err instanceof ActionableError)
    return {
      kind: "failed",
      name,
      code: err.code,
      // An archived object's hint (how to restore it) is the job's to say once (tally.ts), not each object's, cut short.
      message: `${err.message} ${err.hint && err.code !== "ObjectArchived" ? `Next: ${err.hint}` : ""}`
        .trim()
        .slice(0, 300),
    };
  const code = (err as { code?: string; name?: string })?.code ?? (err as { name?: string })?.name ?? "InternalError";
  return { kind: "failed", name, code: String(code), message: String((err as Error)?.message ?? err).slice(0, 300) };
}

/** At most `n` units held at once (big transfers inside a job of small ones); a holder may take several, and waits its turn in order. */
export class Slots {
  #free: number;
  readonly #waiting: { units: number; go: () => void }[] = [];
  constructor(n: number) {
    this.#free = n;
  }
  async use<R>(fn: () => Promise<R>, units = 1): Promise<R> {
    if (this.#waiting.length === 0 && this.#free >= units) this.#free -= units;
    else await new Promise<void>((go) => this.#waiting.push({ units, go }));
    try {
      return await fn();
    } finally {
      this.#free += units;
      // Whoever waits first goes first, when there is room for it (a big holder is not passed by small ones forever).
      while (this.#waiting.length > 0 && this.#free >= this.#waiting[0]!.units) {
        const next = this.#waiting.shift()!;
        this.#free -= next.units;
        next.go();
      }
    }
  }
}
