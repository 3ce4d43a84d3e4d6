/**
 * Calls that outlive the host's patience. When a long call's work is not
 * done within the call budget, the call wrapper (tool-call.ts) answers with
 * a job handle and hands the still-running work here: its promise (which
 * settles to the answer the call would have given), its abort controller
 * and its latest progress. job_status waits for that answer, cancel_job
 * aborts the work with the clean-up a cancelled call gets, list_jobs lists
 * them. A job belongs to its caller: another caller's id is answered as an
 * unknown one. Ended jobs are kept an hour, at most 100 per caller (the
 * oldest ended go first). rclone's remote-control jobs (fs/rc/jobs) are the
 * shape: an id per async call, status, stop, results kept for a while.
 */
import { stopForGood } from "../runtime/kept-transfers.ts";
import { randomBytes } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { JobProgress, JobState, JobView } from "../tools/types.ts";

export type { JobProgress, JobState, JobView } from "../tools/types.ts";

interface Job {
  id: string;
  owner: string;
  tool: string;
  started: Date;
  ended?: Date;
  state: JobState;
  progress: JobProgress;
  abort: AbortController;
  /** Settles to the answer the call would have given (a result or an error result). */
  answer: Promise<CallToolResult>;
  result?: CallToolResult;
}

/** How long an ended job's result is kept, and how many jobs one caller may have. */
export const JOB_KEPT_MS = 60 * 60 * 1000;
export const JOBS_PER_CALLER = 100;
/** The ids this server makes: job_ and 16 random bytes, base64url. */
const JOB_ID = /^job_[A-Za-z0-9_-]{22}$/;

export class JobRegistry {
  readonly #jobs = new Map<string, Job>();

  /**
   * `unknownJob`: told of an id shaped like this server's own that no job here has (with several replicas and no
   * shared state store, another replica's job: remote.ts logs a hint).
   */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly unknownJob?: (id: string) => void,
  ) {}

  /** Takes over a call's running work; `cancelled(result)` tells an answer that came from a cancel. */
  adopt(owner: string, tool: string, started: Date, work: { answer: Promise<CallToolResult>; abort: AbortController; progress: JobProgress }, cancelled: (result: CallToolResult) => boolean): JobView {
    // Room for the one being added: at most JOBS_PER_CALLER with it.
    this.#sweep(owner, 1);
    const job: Job = { id: `job_${randomBytes(16).toString("base64url")}`, owner, tool, started, state: "running", progress: work.progress, abort: work.abort, answer: work.answer };
    this.#jobs.set(job.id, job);
    void work.answer.then((result) => {
      job.result = result;
      job.ended = new Date(this.now());
      job.state = job.abort.signal.aborted && cancelled(result) ? "cancelled" : result.isError ? "failed" : "done";
    });
    return view(job);
  }

  /** The caller's job, or undefined (an unknown id and another caller's id are the same answer). */
  #own(owner: string, id: string): Job | undefined {
    const job = this.#jobs.get(id);
    if (!job && JOB_ID.test(id)) this.unknownJob?.(id);
    return job && job.owner === owner ? job : undefined;
  }

  /** Waits up to `waitMs` for the job to end: its view, with the answer once it has one. */
  async status(owner: string, id: string, waitMs: number, signal: AbortSignal): Promise<{ job: JobView; result?: CallToolResult } | undefined> {
    const job = this.#own(owner, id);
    if (!job) return undefined;
    if (job.state === "running" && waitMs > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const gaveUp = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
      // The answer's own bookkeeping (above) runs first: it was attached before this wait.
      await Promise.race([job.answer.then(() => undefined), gaveUp]);
      clearTimeout(timer);
    }
    return { job: view(job), ...(job.result ? { result: job.result } : {}) };
  }

  /** Aborts a running job (its work cleans up as a cancelled call does) and waits for it to end. */
  async cancel(owner: string, id: string): Promise<JobView | undefined> {
    const job = this.#own(owner, id);
    if (!job) return undefined;
    if (job.state === "running") {
      // For good: what a cut would keep to resume (a multipart upload, a download's temp file) is cleaned up.
      job.abort.abort(stopForGood(Object.assign(new Error("The job was cancelled (cancel_job)."), { name: "AbortError" })));
      await job.answer;
    }
    return view(job);
  }

  /** The caller's jobs, newest first. */
  list(owner: string): JobView[] {
    this.#sweep(owner);
    return [...this.#jobs.values()].filter((j) => j.owner === owner).sort((a, b) => b.started.getTime() - a.started.getTime()).slice(0, JOBS_PER_CALLER).map(view);
  }

  /** Forgets ended jobs past their hour, then the oldest ended ones beyond the caller's hundred. */
  /** Drops ended jobs past the hour, and the caller's oldest ended ones beyond JOBS_PER_CALLER less `room`. */
  #sweep(owner: string, room = 0): void {
    const cutoff = this.now() - JOB_KEPT_MS;
    for (const [id, job] of this.#jobs) if (job.ended && job.ended.getTime() < cutoff) this.#jobs.delete(id);
    const ended = [...this.#jobs.values()].filter((j) => j.owner === owner && j.ended).sort((a, b) => a.ended!.getTime() - b.ended!.getTime());
    const mine = [...this.#jobs.values()].filter((j) => j.owner === owner).length;
    for (const job of ended.slice(0, Math.max(0, mine - (JOBS_PER_CALLER - room)))) this.#jobs.delete(job.id);
  }
}

function view(job: Job): JobView {
  return { id: job.id, tool: job.tool, state: job.state, started_at: job.started.toISOString(), ...(job.ended ? { ended_at: job.ended.toISOString() } : {}), progress: { ...job.progress } };
}
