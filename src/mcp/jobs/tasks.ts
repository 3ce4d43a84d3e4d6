/**
 * MCP Tasks, served from the job registry (jobs.ts): a task is a job — the
 * same id, owner, limits, hour of keeping, cancellation and sharing across
 * replicas — seen through the protocol's task methods instead of the job
 * tools, so that a host that runs tasks waits for the result itself.
 *
 * - 2026-07-28, the Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`;
 *   wire types as in `@modelcontextprotocol/ext-tasks` 0.2.2, `core/v2`): a
 *   call whose request declares the extension in its client capabilities and
 *   that is still running after TASK_GRACE_MS answers `resultType: "task"`;
 *   then `tasks/get` and `tasks/cancel` (`tasks/update` has nothing to take:
 *   no task here asks for input).
 * - 2025-11-25's experimental tasks (the shape VS Code uses): a `tools/call`
 *   with `params.task` answers `{ task }` at once; then `tasks/get`,
 *   `tasks/result` (waits for the end), `tasks/list` and `tasks/cancel`.
 *
 * Written by hand against @modelcontextprotocol/server 2.4.0, which serves
 * neither shape, through its public extension points only (setRequestHandler
 * with schemas, registerCapabilities); replace it when the SDK serves tasks.
 * tools/call itself reaches here through sdk-hooks.ts (whether a task was
 * asked for) and tool-call.ts (the job a task-asking call was handed back as).
 */
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type McpServer,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { TASKS_CAPABILITY, TASKS_EXTENSION } from "../offer.ts";
import { JOB_KEPT_MS, type JobRegistry, type JobView, type Recheck } from "./jobs.ts";

/** A 2026-07-28 call still running after this long becomes a task; a quicker one answers as usual. */
export const TASK_GRACE_MS = 1000;

/** How often a client is asked to poll a running task. */
const POLL_INTERVAL_MS = 2000;

/** Which shape of tasks a call asked for. */
export type TaskShape = "2026" | "2025";

// Keyed by the request's abort signal: the one object every context the SDK makes for one request shares.
const asked = new WeakMap<AbortSignal, TaskShape>();
const handedBack = new WeakMap<AbortSignal, JobView>();

/** The shape of task a tools/call request asks for, if any (sdk-hooks.ts notes it before the call runs). */
export function taskAskedFor(request: { params?: Record<string, unknown> }, ctx: ServerContext): TaskShape | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  if (envelope?.[PROTOCOL_VERSION_META_KEY]) {
    const capabilities = envelope[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
    return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined ? "2026" : undefined;
  }
  const task = request.params?.task;
  return typeof task === "object" && task !== null && !Array.isArray(task) ? "2025" : undefined;
}

export function noteTaskAsked(ctx: ServerContext, shape: TaskShape): void {
  asked.set(ctx.mcpReq.signal, shape);
}

/** Whether this call asked for a task (tool-call.ts: then it is handed back as a job sooner, or at once). */
export function taskAsked(ctx: ServerContext): TaskShape | undefined {
  return asked.get(ctx.mcpReq.signal);
}

/** Records that this call was handed back as `job` because it asked for a task. */
export function noteHandedBackAsTask(ctx: ServerContext, job: JobView): void {
  handedBack.set(ctx.mcpReq.signal, job);
}

/** The answer that creates the task, for a call handed back as a job; undefined for one that answered as usual. */
export function taskCreated(ctx: ServerContext): Record<string, unknown> | undefined {
  const job = handedBack.get(ctx.mcpReq.signal);
  const shape = asked.get(ctx.mcpReq.signal);
  if (!job || !shape) return undefined;
  const task = { ...taskOf(job, shape), status: "working" };
  return shape === "2026" ? { ...task, resultType: "task" } : { task };
}

/** The fields every task shape has, from a job. */
function taskOf(job: JobView, shape: TaskShape): Record<string, unknown> {
  const message = job.progress.message;
  return {
    taskId: job.id,
    status: statusOf(job, shape),
    ...(message ? { statusMessage: message } : {}),
    createdAt: job.started_at,
    lastUpdatedAt: job.ended_at ?? new Date().toISOString(),
    ...(shape === "2026"
      ? { ttlMs: JOB_KEPT_MS, pollIntervalMs: POLL_INTERVAL_MS }
      : { ttl: JOB_KEPT_MS, pollInterval: POLL_INTERVAL_MS }),
  };
}

/**
 * A job's state as a task status. A call that ended with an error result is still a completed call on 2026-07-28
 * (its result is the error the model reads, as without a task); 2025-11-25 calls it failed and gives the result
 * through tasks/result all the same.
 */
function statusOf(job: JobView, shape: TaskShape): string {
  switch (job.state) {
    case "running":
      return "working";
    case "done":
      return "completed";
    case "cancelled":
      return "cancelled";
    default:
      return shape === "2026" ? "completed" : "failed";
  }
}

/** On an HTTP request's auth info (http-eras.ts): its session id says the client declared tasks in its initialize. */
export const TASKS_DECLARED = "store-mcp-server/tasks-declared";

/** What the task methods need from the server: the registry, whose tasks these are, and the policy's recheck. */
export interface TaskServing {
  jobs: JobRegistry;
  caller: string;
  recheck?: Recheck;
}

const TaskId = z.object({ taskId: z.string().min(1).max(200) });

/** Declares tasks (both shapes) and answers their methods for this server's caller. */
export function serveTasks(mcp: McpServer, serving: TaskServing): void {
  // The 2026-07-28 codec drops `capabilities.tasks` from its answers, and 2025's clients read no extensions.
  mcp.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} }, tasks: TASKS_CAPABILITY } as never);
  const { jobs, caller, recheck } = serving;
  const shapeOf = (ctx: ServerContext): TaskShape =>
    (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY] ? "2026" : "2025";
  const found = async (taskId: string, ctx: ServerContext, waitMs = 0) => {
    const status = await jobs.status(caller, taskId, waitMs, ctx.mcpReq.signal, recheck).catch((err: unknown) => {
      // The policy no longer grants the call: its result is not handed over (the registry dropped it).
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${taskId}: ${(err as Error).message}`);
    });
    if (!status) throw notFound(taskId);
    return status;
  };
  mcp.server.setRequestHandler("tasks/get", { params: TaskId }, async ({ taskId }, ctx) => {
    const shape = shapeOf(ctx);
    const { job, result } = await found(taskId, ctx);
    const task = taskOf(job, shape);
    if (shape === "2025") return task as never;
    if (task.status !== "completed") return task as never;
    if (result) return { ...task, result: { ...result, resultType: "complete" } } as never;
    // Ended without a result this replica can give (it was kept by one that has gone): a failed task, saying why.
    return {
      ...task,
      status: "failed",
      error: { code: -32603, message: `The job ${taskId} ended (${job.state}) but its result is not available here.` },
    } as never;
  });
  mcp.server.setRequestHandler("tasks/cancel", { params: TaskId }, async ({ taskId }, ctx) => {
    const job = await jobs.cancel(caller, taskId);
    if (!job) throw notFound(taskId);
    return (shapeOf(ctx) === "2026" ? {} : taskOf(job, "2025")) as never;
  });
  // 2025-11-25: the result once the task has ended, waiting for it as long as the client's request stays open.
  mcp.server.setRequestHandler("tasks/result", { params: TaskId }, async ({ taskId }, ctx) => {
    for (;;) {
      const { job, result } = await found(taskId, ctx, 60_000);
      if (job.state === "cancelled")
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${taskId} was cancelled.`);
      if (result) return withRelatedTask(result, taskId) as never;
      if (ctx.mcpReq.signal.aborted) throw new ProtocolError(ProtocolErrorCode.InternalError, "cancelled");
    }
  });
  mcp.server.setRequestHandler("tasks/list", { params: z.object({ cursor: z.string().optional() }) }, async () => {
    return { tasks: (await jobs.list(caller, recheck)).map((job) => taskOf(job, "2025")) } as never;
  });
  mcp.server.setRequestHandler("tasks/update", { params: TaskId.passthrough() }, async ({ taskId }) => {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Task ${taskId} asks for no input: this server's tasks never wait for the user (a confirmation is asked before the task starts).`,
    );
  });
}

function notFound(taskId: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Task ${JSON.stringify(taskId.slice(0, 80))} not found: no task of this caller has that id (tasks are kept for an hour after they end).`,
  );
}

function withRelatedTask(result: CallToolResult, taskId: string): CallToolResult {
  return { ...result, _meta: { ...result._meta, "io.modelcontextprotocol/related-task": { taskId } } };
}
