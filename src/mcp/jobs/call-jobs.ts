/**
 * The parts of a call that concern its becoming a job (tool-call.ts): whether
 * it may, the answer that hands it back, the result of one that came to a
 * question after it was handed back, the progress a job keeps, and the job
 * tools' view of the registry.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ProgressReporter } from "../../runtime/progress.ts";
import type { ToolContext, ToolDefinition } from "../../tool-kit/types.ts";
import type { JobProgress, JobRegistry, JobView, Recheck } from "./jobs.ts";
import { TASK_GRACE_MS, type TaskShape } from "./tasks.ts";

/** Whether a call of `tool` with `args` is one that may be handed back as a job. */
export function handsBack(tool: ToolDefinition, args: Record<string, unknown>): boolean {
  return tool.handsBack === true || (typeof tool.handsBack === "function" && tool.handsBack(args as never));
}

/** The call's answer when its budget ran out: the job, in words and in structuredContent, and how to get the result. */
export function handBack(job: JobView, budgetMs: number, meta: { _meta?: Record<string, unknown> }): CallToolResult {
  const next = `call job_status with job_id "${job.id}" to wait for the result (or cancel_job to stop it).`;
  const so = job.progress.message ? `: ${job.progress.message}` : "";
  const text = `Still running ${job.tool} after ${Math.round(budgetMs / 1000)} s${so}. It goes on in the background as job ${job.id}. Next: ${next}`;
  return { content: [{ type: "text", text }], structuredContent: { job, next }, ...meta };
}

/** A job's result when its call came to a question for the user after it was handed back: nothing was changed. */
export function unconfirmedJob(tool: string): CallToolResult {
  const text = `NotConfirmed: ${tool} came to a question for the user after it was handed back as a job, and a job cannot ask. Nothing was changed past that point. Next: call ${tool} again with the same arguments; it asks before it changes anything.`;
  return { content: [{ type: "text", text }], isError: true };
}

/** A progress reporter that also keeps the latest figures for the job (which outlives the client's reporter). */
export function recording(inner: ProgressReporter, into: JobProgress): ProgressReporter {
  return {
    start(total, what) {
      const sink = inner.start(total, what);
      // A job's status shows the size and 0 done from the start, not only once a first part is done.
      into.done_bytes = 0;
      if (total !== undefined) into.total_bytes = total;
      into.message = `${what}: 0 of ${total ?? "?"} bytes`;
      return (done) => {
        into.done_bytes = done;
        if (total !== undefined) into.total_bytes = total;
        into.message = `${what}: ${done} of ${total ?? "?"} bytes`;
        sink(done);
      };
    },
    report(done, total, message, final, figures = { doneObjects: done, totalObjects: total }) {
      if (figures.doneObjects !== undefined) into.done_objects = figures.doneObjects;
      if (figures.totalObjects !== undefined) into.total_objects = figures.totalObjects;
      if (figures.doneBytes !== undefined) into.done_bytes = figures.doneBytes;
      if (figures.totalBytes !== undefined) into.total_bytes = figures.totalBytes;
      into.message = message;
      inner.report(done, total, message, final, figures);
    },
    close: () => inner.close(),
  };
}

/** The job tools' view of the registry: this caller's jobs only. */
export function callerJobs(jobs: JobRegistry, caller: string, recheck?: Recheck): NonNullable<ToolContext["jobs"]> {
  return {
    status: async (id, waitMs, signal) =>
      (await jobs.status(caller, id, waitMs, signal, recheck)) as Awaited<
        ReturnType<NonNullable<ToolContext["jobs"]>["status"]>
      >,
    cancel: (id) => jobs.cancel(caller, id),
    list: () => jobs.list(caller, recheck),
  };
}

/**
 * How long a call runs before it is handed back as a job: none for a call that cannot become one; the call budget; for
 * one that asked for a task, sooner: a 2026-07-28 one after a short grace (a quick call answers as usual), a
 * 2025-11-25 one at once (it must answer with a task).
 */
export function callBudgetOf(canBeJob: boolean, taskShape: TaskShape | undefined, callBudgetMs: number) {
  if (!canBeJob) return undefined;
  if (taskShape === "2025") return 0;
  return taskShape === "2026" ? Math.min(TASK_GRACE_MS, callBudgetMs) : callBudgetMs;
}
