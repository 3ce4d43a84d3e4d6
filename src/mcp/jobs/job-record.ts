/**
 * One job as this replica keeps it, what the job tools see of it, and what its
 * answer makes of it when its work ends.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ActionableError } from "../../runtime/errors.ts";
import type { JobProgress, JobState, JobView } from "../../tool-kit/types.ts";
import { interrupted } from "./other-replicas.ts";

export interface Job {
  id: string;
  /** The arguments it was called with: what an interrupted job's caller calls again. */
  args: Record<string, unknown>;
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
  /** Why the policy in force would refuse the call now (remote mode with a policy), judged again on every change. */
  recheck?: () => ActionableError | undefined;
  /** Set when a policy change stopped it: its answer. */
  refused?: ActionableError;
}

/**
 * A job's state and result once its answer came: failed with the policy's words when a policy change stopped it;
 * interrupted (to be called again) when this process's shutdown cut it; else cancelled, failed or done, as the call
 * would have answered.
 */
export function endingOf(
  job: Job,
  result: CallToolResult,
  stopping: boolean,
  cancelled: (result: CallToolResult) => boolean,
): [JobState, CallToolResult] {
  if (job.refused) {
    const text = `${job.refused.describe()} The job was stopped when the policy changed; nothing more was done.`;
    return ["failed", { content: [{ type: "text", text }], isError: true }];
  }
  if (stopping && result.isError && !job.abort.signal.aborted) {
    const cut = interrupted(
      { view: view(job), owner: job.owner, args: job.args },
      "was stopped (a restart or a scale-down) before the job ended",
    );
    return ["interrupted", cut.result];
  }
  const state = job.abort.signal.aborted && cancelled(result) ? "cancelled" : result.isError ? "failed" : "done";
  return [state, result];
}

export function view(job: Job): JobView {
  return {
    id: job.id,
    tool: job.tool,
    state: job.state,
    started_at: job.started.toISOString(),
    ...(job.ended ? { ended_at: job.ended.toISOString() } : {}),
    progress: { ...job.progress },
  };
}
