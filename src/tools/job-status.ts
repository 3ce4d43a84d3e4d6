import { z } from "zod";
import { ActionableError } from "../runtime/errors.ts";
import { defineTool, type JobView, type ToolOutput } from "../tool-kit/types.ts";

export const jobId = z.string().min(1).max(100);
export const jobShape = z.object({
  id: z.string(),
  tool: z.string(),
  state: z.enum(["running", "done", "failed", "cancelled", "interrupted"]),
  started_at: z.string(),
  ended_at: z.string().optional(),
  progress: z.object({
    done_bytes: z.number().optional(),
    total_bytes: z.number().optional(),
    done_objects: z.number().optional(),
    total_objects: z.number().optional(),
    message: z.string().optional(),
  }),
});

export function noSuchJob(id: string): ActionableError {
  return new ActionableError({
    resource: id,
    code: "NoSuchJob",
    message: "No job of yours has this id (a job's result is kept an hour after it ends).",
    hint: "call list_jobs for your jobs; if it is gone, call the original tool again (bulk tools and transfers skip what is done).",
  });
}

/** The words for a job still running, and its next step. */
function stillRunning(job: JobView): ToolOutput<{ job: JobView; next: string }> {
  const next = `call job_status with job_id "${job.id}" again to wait more (or cancel_job to stop it).`;
  return {
    content: [
      {
        type: "text",
        text: `Job ${job.id} (${job.tool}) is still running${job.progress.message ? `: ${job.progress.message}` : ""}. Next: ${next}`,
      },
    ],
    structured: { job, next },
  };
}

export const jobStatus = defineTool({
  name: "job_status",
  title: "Job status",
  description: "Waits for a job a long call handed back: its result, or its progress.",
  inputSchema: z
    .object({
      job_id: jobId,
      wait_seconds: z.number().int().min(0).max(3600).optional().describe("Default and at most the call budget."),
    })
    .strict(),
  // The finished call's own structuredContent, with `job` beside it.
  outputSchema: z.object({ job: jobShape }).catchall(z.unknown()),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  group: "read",
  writesToStore: false,
  aboutJobs: true,
  storeless: true,
  async handler(args, ctx) {
    if (!ctx.jobs) throw noSuchJob(args.job_id);
    const budgetMs = ctx.callBudgetMs ?? 0;
    const waitMs = Math.min((args.wait_seconds ?? budgetMs / 1000) * 1000, budgetMs);
    const found = await ctx.jobs.status(args.job_id, waitMs, ctx.signal);
    if (!found) throw noSuchJob(args.job_id);
    const { job, result } = found;
    if (!result) return stillRunning(job);
    // The original answer, as it was, with the job beside its structured content (an error's text stays the tool's actionable error).
    const lead =
      job.state === "done" ? [] : [{ type: "text" as const, text: `Job ${job.id} (${job.tool}) ${job.state}.` }];
    return { content: [...lead, ...result.content], structured: { ...(result.structuredContent ?? {}), job } };
  },
});
