/**
 * The slots queries run in, shared fairly between callers. A server runs at
 * most `slots` queries at once and answers the next QueryBusy at once rather
 * than queueing it. Where several callers share the server (remote mode), a
 * caller holds at most `slots - 1` of them (one, with two), so that no caller
 * can take every slot and keep the others' queries out: their next query is
 * the one refused, naming the query they run and how to stop it. Each caller
 * also has a query-time budget, the seconds their queries held a slot,
 * refilled evenly over an hour (a token bucket), so that renewing a held slot
 * again and again has a cost. A single caller (stdio) may use every slot and
 * has no budget: there is nobody to keep out.
 */
import { ActionableError } from "../../runtime/errors.ts";
import { telemetry } from "../../runtime/telemetry.ts";

/** Who takes a slot, where several callers share the server. */
export interface SlotOwner {
  /** One caller, one id. */
  id: string;
  /** The job the taking call runs as, once handed back. */
  job(): string | undefined;
  /** Seconds of slot time an hour; 0: no budget. */
  secondsPerHour: number;
  /** The query's SQL, to name it to its caller. */
  sql: string;
}

interface Held {
  owner: SlotOwner;
  since: number;
}

const HOUR_MS = 3_600_000;

export class QuerySlots {
  readonly #held = new Set<Held>();
  /** Per caller: the budget's seconds left, at the time they were counted. */
  readonly #budgets = new Map<string, { left: number; at: number }>();

  constructor(
    readonly slots: number,
    readonly now: () => number = Date.now,
  ) {}

  get running(): number {
    return this.#held.size;
  }

  /** A slot for one query, or an ActionableError at once: the release gives it back (once). */
  take(owner?: SlotOwner): () => void {
    try {
      if (owner) this.#checkShare(owner);
      if (this.#held.size >= this.slots) throw this.#busy();
    } catch (err) {
      telemetry().refused((err as ActionableError).code === "QueryBudgetSpent" ? "query_budget" : "query_busy");
      throw err;
    }
    const held: Held = {
      owner: owner ?? { id: "", job: () => undefined, secondsPerHour: 0, sql: "" },
      since: this.now(),
    };
    this.#held.add(held);
    return () => {
      if (!this.#held.delete(held)) return;
      if (owner && owner.secondsPerHour > 0) this.#spend(owner, (this.now() - held.since) / 1000);
    };
  }

  #checkShare(owner: SlotOwner): void {
    const mine = [...this.#held].filter((h) => h.owner.id === owner.id);
    if (mine.length >= Math.max(1, this.slots - 1)) throw this.#ownRunning(mine[0]!);
    if (owner.secondsPerHour <= 0) return;
    // What the caller's running queries have held so far counts too: a slot held for long is paid for while held.
    const running = mine.reduce((s, h) => s + (this.now() - h.since) / 1000, 0);
    const left = this.#left(owner) - running;
    if (left > 0) return;
    const waitS = Math.ceil((-left + 1) / (owner.secondsPerHour / 3600));
    throw new ActionableError({
      resource: "query_objects",
      code: "QueryBudgetSpent",
      message: `Your queries have held this server's query slots for ${owner.secondsPerHour} s within the last hour, the most one caller may (STORE_CALLER_QUERY_SECONDS).`,
      hint: `retry in about ${waitS} s, when the budget has refilled; other tools are not affected.`,
      retryable: true,
    });
  }

  #left(owner: SlotOwner): number {
    const was = this.#budgets.get(owner.id);
    if (!was) return owner.secondsPerHour;
    const refilled = ((this.now() - was.at) / HOUR_MS) * owner.secondsPerHour;
    return Math.min(owner.secondsPerHour, was.left + refilled);
  }

  #spend(owner: SlotOwner, seconds: number): void {
    const left = this.#left(owner) - seconds;
    if (left >= owner.secondsPerHour) this.#budgets.delete(owner.id);
    else this.#budgets.set(owner.id, { left, at: this.now() });
  }

  #ownRunning(held: Held): ActionableError {
    const job = held.owner.job();
    const sql = held.owner.sql.replace(/\s+/g, " ").slice(0, 80);
    const secs = Math.round((this.now() - held.since) / 1000);
    return new ActionableError({
      resource: "query_objects",
      code: "QueryBusy",
      message: `You are already running a query on this server (${job ? `job ${job}, ` : ""}started ${secs} s ago: ${sql}${held.owner.sql.length > 80 ? "…" : ""}); one caller runs one query at a time here, so that other callers' queries can run.`,
      hint: job
        ? `wait for it with job_status (job_id "${job}") or stop it with cancel_job (job_id "${job}"), then call again.`
        : "wait for that call to answer (or cancel it), then call again.",
      retryable: true,
    });
  }

  #busy(): ActionableError {
    return new ActionableError({
      resource: "query_objects",
      code: "QueryBusy",
      message: `${this.#held.size} queries are running on this server, the most it runs at once.`,
      hint: "retry in 5-10 seconds (or after a running query's job ends: job_status); other tools are not affected.",
      retryable: true,
    });
  }
}
