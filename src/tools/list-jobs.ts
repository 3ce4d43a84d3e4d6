import { z } from "zod";
import { defineTool, textOutput } from "../tool-kit/types.ts";
import { jobShape } from "./job-status.ts";

export const listJobs = defineTool({
  name: "list_jobs",
  title: "List jobs",
  description: "Your jobs, running and ended in the last hour, newest first.",
  inputSchema: z.object({}).strict(),
  outputSchema: z.object({ jobs: z.array(jobShape) }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  group: "read",
  writesToStore: false,
  aboutJobs: true,
  storeless: true,
  async handler(_args, ctx) {
    const jobs = (await ctx.jobs?.list()) ?? [];
    const lines = jobs.map(
      (j) => `${j.id}\t${j.tool}\t${j.state}\t${j.started_at}${j.progress.message ? `\t${j.progress.message}` : ""}`,
    );
    return textOutput(jobs.length ? `${jobs.length} job(s):\n${lines.join("\n")}` : "No jobs.", { jobs });
  },
});
