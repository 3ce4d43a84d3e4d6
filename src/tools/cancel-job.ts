import { z } from "zod";
import { defineTool, textOutput } from "../tool-kit/types.ts";
import { jobId, jobShape, noSuchJob } from "./job-status.ts";

export const cancelJob = defineTool({
  name: "cancel_job",
  title: "Cancel a job",
  description: "Stops a running job; nothing partial is left.",
  inputSchema: z.object({ job_id: jobId }).strict(),
  outputSchema: z.object({ job: jobShape }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  group: "read",
  writesToStore: false,
  aboutJobs: true,
  storeless: true,
  async handler(args, ctx) {
    const job = await ctx.jobs?.cancel(args.job_id);
    if (!job) throw noSuchJob(args.job_id);
    return textOutput(`Job ${job.id} (${job.tool}) is ${job.state}.`, { job });
  },
});
