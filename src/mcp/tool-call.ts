/**
 * One tool call: the steps it goes through (call/call-steps.ts: the store it
 * names and a copy's source, the required audit log, the store's refusal,
 * the operator's allowlist, the caller's policy, job admission, memory, the
 * audit line, the response fit, then the tool), composed in that order
 * (call/compose.ts); any failure is one ActionableError named for its store,
 * logged, audited and answered as an error result. A call that can run long
 * races the call budget, a wrapper of its own: when the budget wins, the
 * answer is a job handle and the running work (its promise, abort
 * controller, progress) goes to the job registry (jobs.ts); tool files know
 * nothing of it. Registration (server.ts) only loops over the tools.
 */
import { isInputRequiredResult, type ServerContext } from "@modelcontextprotocol/server";
import type { ToolDefinition } from "../tool-kit/types.ts";
import { type Answer, type CallEnvironment, clientProgress, newCallState } from "./call/call-state.ts";
import { CALL_STEPS, runTool } from "./call/call-steps.ts";
import { compose } from "./call/compose.ts";
import { callBudgetOf, handBack, handsBack, recording, unconfirmedJob } from "./jobs/call-jobs.ts";
import type { JobProgress } from "./jobs/jobs.ts";
import { noteHandedBackAsTask, taskAsked } from "./jobs/tasks.ts";

export type { CallEnvironment } from "./call/call-state.ts";
export { describeCall } from "./call/describe-call.ts";

const runCall = compose(CALL_STEPS, runTool);

/** The handler the SDK runs for `tool`; `meta` goes on every answer (the object browser's list of the caller's tools). */
export function toolCall(tool: ToolDefinition, env: CallEnvironment, meta: { _meta?: Record<string, unknown> }) {
  return async (given: Record<string, unknown>, request: ServerContext): Promise<Answer> => {
    const { mcpReq } = request;
    const { store: storeName, source_store: sourceName, ...args } = given;
    // The work's own signal: the client's cancel reaches it only while the call is open (a job outlives the call).
    const work = new AbortController();
    const clientCancelled = () => work.abort(mcpReq.signal.reason);
    if (mcpReq.signal.aborted) clientCancelled();
    else mcpReq.signal.addEventListener("abort", clientCancelled, { once: true });
    const signal = env.calls.callSignal(work.signal);
    const toClient = clientProgress(request, signal);
    const jobProgress: JobProgress = {};
    const startedAt = new Date();
    // A call that may become a job: one that can run long, or any that asked for a task (2025-11-25 asks for one at once).
    const taskShape = env.jobs && !tool.aboutJobs ? taskAsked(request) : undefined;
    const canBeJob = env.jobs !== undefined && (taskShape === "2025" || handsBack(tool, args));
    let adopted = false;
    let jobId: string | undefined;
    const call = newCallState(
      { tool, env, given, args, storeName, sourceName, request, signal, canBeJob, meta },
      recording(toClient, jobProgress),
      { adopted: () => adopted, job: () => jobId },
    );
    // Tracked whole, so that a shutdown waits for the call's last step (its audit line, its job's end), not only the tool.
    const answer = env.calls.track(call.span.run(() => runCall(call)));
    const budget = callBudgetOf(canBeJob, taskShape, env.callBudgetMs);
    try {
      if (budget === undefined || (budget > 0 && (await withinBudget(answer, budget)))) return await answer;
      adopted = true;
      mcpReq.signal.removeEventListener("abort", clientCancelled);
      toClient.close();
      // A question for the user cannot reach them through a job (the call that could carry it has been answered).
      const result = answer.then((r) => (isInputRequiredResult(r) ? unconfirmedJob(tool.name) : r));
      // The arguments as called (the store too): what an interrupted job's caller calls again, and what the policy judges.
      const recheck = env.recheck && (() => env.recheck!(tool.name, given));
      const job = env.jobs!.adopt(
        env.caller,
        tool.name,
        startedAt,
        { answer: result, abort: work, progress: jobProgress, args: given, ...(recheck ? { recheck } : {}) },
        (r) => r.isError === true,
      );
      jobId = job.id;
      env.log.debug(
        `${call.about} handed back as ${job.id} after ${Math.round(performance.now() - call.startedAt)} ms`,
      );
      // The task's answer replaces this one on its way out (sdk-hooks.ts); this one is what the SDK checks.
      if (taskShape) noteHandedBackAsTask(request, job);
      return handBack(job, budget, meta);
    } finally {
      if (!adopted) mcpReq.signal.removeEventListener("abort", clientCancelled);
    }
  };
}

/** Whether `answer` settles within `ms` (the call budget). */
async function withinBudget(answer: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const first = await Promise.race([
    answer.then(() => "answer" as const),
    new Promise<"budget">((resolve) => (timer = setTimeout(() => resolve("budget"), ms))),
  ]);
  clearTimeout(timer);
  return first === "answer";
}
