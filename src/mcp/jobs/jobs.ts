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
 *
 * With a share (--state-url: transports/shared-jobs.ts) every replica sees
 * every job: a running job's record is written each second (progress, and
 * that its replica is alive), an ended one's with its answer; a job this
 * replica does not run is read, waited for and cancelled through the share
 * (other-replicas.ts).
 */

import { randomBytes } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { ActionableError } from "../../runtime/errors.ts";
import { stopForGood } from "../../runtime/stop-reason.ts";
import type { JobProgress, JobView } from "../../tool-kit/types.ts";

export type { JobProgress, JobState, JobView } from "../../tool-kit/types.ts";
export type { JobLimits, JobShare, Recheck, SharedJob } from "./job-share.ts";

import { endingOf, type Job, view } from "./job-record.ts";
import type { JobLimits, JobShare, Recheck } from "./job-share.ts";
import { type FoundJob, OtherReplicas } from "./other-replicas.ts";

/** How long an ended job's result is kept, and how many jobs one caller may have. */
export const JOB_KEPT_MS = 60 * 60 * 1000;
export const JOBS_PER_CALLER = 100;
/** How often a running job's record is written to the share (progress, and that its replica lives). */
const SHARE_EVERY_MS = 1_000;

/** The ids this server makes: job_ and 16 random bytes, base64url. */
const JOB_ID = /^job_[A-Za-z0-9_-]{22}$/;

export class JobRegistry {
  readonly #jobs = new Map<string, Job>();
  /** Set when the process stops: jobs it cuts from then on end interrupted (to be called again), not failed. */
  #stopping = false;
  /** With a share: the jobs other replicas run. */
  readonly #others: OtherReplicas | undefined;

  /**
   * `unknownJob`: told of an id shaped like this server's own that no job here has (with several replicas and no
   * shared state store, another replica's job: remote.ts logs a hint).
   */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly unknownJob?: (id: string) => void,
    private readonly share?: JobShare,
    private readonly limits: JobLimits = {},
  ) {
    this.#others = share && new OtherReplicas(share, now);
    share?.onCancel((id) => {
      const job = this.#jobs.get(id);
      if (job) void this.cancel(job.owner, id);
    });
  }

  /** Takes over a call's running work; `cancelled(result)` tells an answer that came from a cancel. */
  adopt(
    owner: string,
    tool: string,
    started: Date,
    work: {
      answer: Promise<CallToolResult>;
      abort: AbortController;
      progress: JobProgress;
      args?: Record<string, unknown>;
      recheck?: () => ActionableError | undefined;
    },
    cancelled: (result: CallToolResult) => boolean,
  ): JobView {
    // Room for the one being added: at most JOBS_PER_CALLER with it.
    this.#sweep(owner, 1);
    const job: Job = {
      id: `job_${randomBytes(16).toString("base64url")}`,
      args: work.args ?? {},
      owner,
      tool,
      started,
      state: "running",
      progress: work.progress,
      abort: work.abort,
      answer: work.answer,
      ...(work.recheck ? { recheck: work.recheck } : {}),
    };
    this.#jobs.set(job.id, job);
    // A running job is still the caller's work in flight: it holds a slot of their limit until it ends.
    const slot = this.limits.holdSlot?.(owner);
    const shared = () =>
      this.share?.save({ view: view(job), owner, args: job.args, ...(job.result ? { result: job.result } : {}) });
    shared();
    const writing = this.share && setInterval(shared, SHARE_EVERY_MS);
    void work.answer.then((result) => {
      job.ended = new Date(this.now());
      [job.state, job.result] = endingOf(job, result, this.#stopping, cancelled);
      clearInterval(writing);
      slot?.();
      shared();
    });
    return view(job);
  }

  /** Jobs (and tasks) of this replica running now. */
  get running(): number {
    let n = 0;
    for (const job of this.#jobs.values()) if (job.state === "running") n++;
    return n;
  }

  /**
   * Refuses a long call (one that may become a job) while the caller has as many jobs running as they may: with a
   * share, every replica's count.
   */
  async admit(owner: string): Promise<void> {
    const max = this.limits.maxRunning;
    if (!max) return;
    const running = new Map(
      [...this.#jobs.values()]
        .filter((j) => j.owner === owner && j.state === "running")
        .map((j) => [j.id, j.tool] as const),
    );
    if (running.size < max && this.share) {
      try {
        for (const j of await this.share.listOf(owner, JOBS_PER_CALLER))
          if (j.view.state === "running" && j.alive !== false) running.set(j.view.id, j.view.tool);
      } catch {
        // The share cannot answer: this replica's count decides.
      }
    }
    if (running.size < max) return;
    const ids = [...running].map(([id, tool]) => `${id} (${tool})`).join(", ");
    throw new ActionableError({
      resource: "jobs",
      code: "JobLimit",
      message: `You have ${running.size} jobs running, the most one caller may have at once: ${ids}.`,
      hint: "wait for one to end (job_status with its job_id waits for it) or stop one (cancel_job), then call again.",
      retryable: true,
    });
  }

  /**
   * The policy changed: every running job of this replica whose call it would now refuse is stopped for good (nothing
   * kept to resume), and ends with the refusal as its answer. Returns how many were stopped.
   */
  async recheckRunning(): Promise<number> {
    const stopped: Promise<unknown>[] = [];
    for (const job of this.#jobs.values()) {
      if (job.state !== "running" || !job.recheck) continue;
      const refusal = job.recheck();
      if (!refusal) continue;
      job.refused = refusal;
      job.abort.abort(stopForGood(Object.assign(new Error(refusal.message), { name: "AbortError" })));
      stopped.push(job.answer);
    }
    await Promise.allSettled(stopped);
    return stopped.length;
  }

  /** The process is stopping: the jobs its shutdown cuts end interrupted, and say so (shared: in their records). */
  stopping(): void {
    this.#stopping = true;
  }

  /** Waits up to `ms` for the running jobs to end (a stopping process gives them its grace time). */
  async settled(ms: number): Promise<void> {
    const running = [...this.#jobs.values()].filter((j) => j.state === "running").map((j) => j.answer);
    if (running.length === 0 || ms <= 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.allSettled(running), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  /** The caller's job, or undefined (an unknown id and another caller's id are the same answer). */
  #own(owner: string, id: string): Job | undefined {
    const job = this.#jobs.get(id);
    if (!job && JOB_ID.test(id)) this.unknownJob?.(id);
    return job && job.owner === owner ? job : undefined;
  }

  /**
   * Waits up to `waitMs` for the job to end: its view, with the answer once it has one. With `recheck`, an answer is
   * handed over only while the caller's policy still grants the call: else the result is dropped, and PolicyDenied thrown.
   */
  async status(
    owner: string,
    id: string,
    waitMs: number,
    signal: AbortSignal,
    recheck?: Recheck,
  ): Promise<{ job: JobView; result?: CallToolResult } | undefined> {
    const found = await this.#status(owner, id, waitMs, signal);
    // A job the policy stopped answers with that refusal itself, which tells nothing the policy withholds.
    if (!found?.result || !recheck || this.#jobs.get(id)?.refused) return found;
    const refusal = recheck(found.job.tool, found.args);
    if (!refusal) return found;
    this.#jobs.delete(id);
    this.share?.drop(id, owner);
    throw refusal;
  }

  async #status(owner: string, id: string, waitMs: number, signal: AbortSignal): Promise<FoundJob | undefined> {
    const job = this.#own(owner, id);
    if (!job) return this.#others?.status(owner, id, waitMs, signal);
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
    return { job: view(job), args: job.args, ...(job.result ? { result: job.result } : {}) };
  }

  /** Aborts a running job (its work cleans up as a cancelled call does) and waits for it to end; another replica's through the share. */
  async cancel(owner: string, id: string): Promise<JobView | undefined> {
    const job = this.#own(owner, id);
    if (!job) return this.#others?.cancel(owner, id);
    if (job.state === "running") {
      // For good: what a cut would keep to resume (a multipart upload, a download's temp file) is cleaned up.
      job.abort.abort(
        stopForGood(Object.assign(new Error("The job was cancelled (cancel_job)."), { name: "AbortError" })),
      );
      await job.answer;
    }
    return view(job);
  }

  /**
   * The caller's jobs, newest first: this replica's, and with a share every replica's. With `recheck`, a job whose call
   * the caller's policy no longer grants is listed without its progress, which may name what the policy now withholds.
   */
  async list(owner: string, recheck?: Recheck): Promise<JobView[]> {
    this.#sweep(owner);
    const judged = ({ view: v, args }: { view: JobView; args: Record<string, unknown> }): JobView =>
      recheck?.(v.tool, args) ? { ...v, progress: { message: "not shown: the policy no longer grants this call" } } : v;
    const mine = [...this.#jobs.values()]
      .filter((j) => j.owner === owner)
      .map((j) => judged({ view: view(j), args: j.args }));
    const shared = ((await this.#others?.list(owner, JOBS_PER_CALLER)) ?? []).map(judged);
    const byId = new Map([...shared, ...mine].map((j) => [j.id, j]));
    return [...byId.values()]
      .sort((a, b) => Date.parse(b.started_at) - Date.parse(a.started_at))
      .slice(0, JOBS_PER_CALLER);
  }

  /** Drops ended jobs past the hour, and the caller's oldest ended ones beyond JOBS_PER_CALLER less `room`. */
  #sweep(owner: string, room = 0): void {
    const cutoff = this.now() - JOB_KEPT_MS;
    for (const [id, job] of this.#jobs) if (job.ended && job.ended.getTime() < cutoff) this.#jobs.delete(id);
    const ended = [...this.#jobs.values()]
      .filter((j) => j.owner === owner && j.ended)
      .sort((a, b) => a.ended!.getTime() - b.ended!.getTime());
    const mine = [...this.#jobs.values()].filter((j) => j.owner === owner).length;
    for (const job of ended.slice(0, Math.max(0, mine - (JOBS_PER_CALLER - room)))) this.#jobs.delete(job.id);
  }
}
