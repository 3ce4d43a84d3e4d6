/**
 * One tool call as its steps see it (call-steps.ts): what was called and by
 * whom, fixed before the first step, and what the steps find out on the way
 * (the stores it is in, the caller's guard, the memory it holds).
 */
import type { CallToolResult, InputRequiredResult, ServerContext } from "@modelcontextprotocol/server";
import type { CallerAccess } from "../../access/index.ts";
import type { LocalFiles } from "../../local/index.ts";
import { type AuditLog, auditBytes, auditTarget } from "../../runtime/audit.ts";
import type { CallTracker } from "../../runtime/lifecycle.ts";
import type { Logger } from "../../runtime/log.ts";
import type { ByteBudget, LeaseHolder } from "../../runtime/memory.ts";
import { NO_PROGRESS, type ProgressReporter, progressReporter } from "../../runtime/progress.ts";
import { type CallSpan, directionOf, TRACE_HEADERS, type TraceParent, telemetry } from "../../runtime/telemetry.ts";
import type { Storage } from "../../storage/index.ts";
import type { StoreInfo, ToolDefinition } from "../../tool-kit/types.ts";
import type { UserConfirmation } from "../confirmations.ts";
import type { JobRegistry, Recheck } from "../jobs/jobs.ts";
import type { StoreScope, Stores } from "../stores.ts";
import { addressesOf } from "./addresses.ts";
import { describeCall } from "./describe-call.ts";

export type Answer = CallToolResult | InputRequiredResult;

/** What every call of one server shares. */
export interface CallEnvironment {
  stores: Stores;
  /** The caller's policy (remote mode with --policy). */
  access?: CallerAccess;
  files: LocalFiles;
  log: Logger;
  calls: CallTracker;
  memory: ByteBudget;
  leases?: LeaseHolder;
  audit?: AuditLog;
  /** Who calls (auth/caller-id.ts): the key of their jobs and the audit line's caller; "anonymous" or "local" without a token. */
  caller: string;
  confirmWithUser: UserConfirmation;
  /** resource_link items (STORE_RESOURCE_LINKS): s3:// URIs name the default store's objects, so only its calls get them. */
  resourceLinks: boolean;
  /** Every store, with several (list_stores). */
  storeInfos?: readonly StoreInfo[];
  /** Where calls handed back as jobs go on; undefined: no job handles (the job tools are not offered). */
  jobs?: JobRegistry;
  /** How long a long call runs before it answers with a job handle (--call-budget); 0: never. */
  callBudgetMs: number;
  /** Why the caller's policy in force now would refuse a call (remote mode with a policy): jobs are judged by it. */
  recheck?: Recheck;
  /** The most one query may spill to disk (STORE_QUERY_SPILL_MB); absent: the default for the temp directory. */
  querySpillBytes?: number;
  /** Remote mode: the server's callers share its query slots fairly, each with this much query time an hour (0: no limit). */
  shared?: { querySecondsPerHour: number };
}

export interface CallState {
  readonly tool: ToolDefinition;
  readonly env: CallEnvironment;
  /** The arguments as called, the store names included (what a job's caller calls again). */
  readonly given: Record<string, unknown>;
  /** The tool's own arguments (without `store` and `source_store`). */
  readonly args: Record<string, unknown>;
  readonly storeName: unknown;
  readonly sourceName: unknown;
  readonly request: ServerContext;
  /** The work's signal: the client's cancel while the call is open, and the server's shutdown. */
  readonly signal: AbortSignal;
  readonly progress: ProgressReporter;
  /** Whether this call may become a job (it can run long, or asked for a task). */
  readonly canBeJob: boolean;
  /** On every answer: the object browser's list of the caller's tools. */
  readonly meta: { _meta?: Record<string, unknown> };
  /** `get_object bucket="b" key="k"`, for debug logs. */
  readonly about: string;
  readonly startedAt: number;
  /** The call's span (runtime/telemetry.ts; nothing when traces are off): ended by its audit. */
  readonly span: CallSpan;
  /** The call's audit line, with this outcome (and the result's bytes, where it says). */
  audit(outcome: string, structured?: unknown): void;
  /** Whether the call was handed back as a job (its answer then goes nowhere). */
  adopted(): boolean;
  /** The job it runs as, once handed back. */
  job(): string | undefined;
  /** The store the call is in (the default until the store step). */
  scope: StoreScope;
  /** A copy's source store, when the call names one. */
  source?: StoreScope;
  /** The caller policy's view of a store (the identity where there is no policy). */
  guard: (storage: Storage, store: string) => Storage;
}

/** What is fixed about a call before its first step. */
type Fixed = Pick<
  CallState,
  "tool" | "env" | "given" | "args" | "storeName" | "sourceName" | "request" | "signal" | "canBeJob" | "meta"
>;

/** A call's state: in the default store, with no guard, until its steps say more; its audit line from what it names. */
export function newCallState(
  fixed: Fixed,
  progress: ProgressReporter,
  job: Pick<CallState, "adopted" | "job">,
): CallState {
  const { tool, env, args, sourceName, request } = fixed;
  const call: CallState = {
    ...fixed,
    ...job,
    progress,
    about: describeCall(tool.name, fixed.given),
    startedAt: performance.now(),
    span: telemetry().span("tools/call", tool.name, request.mcpReq.id, traceParentOf(request)),
    audit: (outcome, structured) => {
      measure(call, outcome, auditBytes(structured, tool.bytesField));
      env.audit?.write({
        caller: env.caller,
        action: tool.name,
        ...(env.stores.several ? { store: call.scope.info.name } : {}),
        ...auditTarget(args, typeof sourceName === "string" ? sourceName : undefined, addressesOf(tool.name)),
        outcome,
        ...optionalBytes(auditBytes(structured, tool.bytesField)),
        duration_ms: Math.round(performance.now() - call.startedAt),
        request_id: request.mcpReq.id,
      });
    },
    scope: env.stores.default,
    guard: (storage) => storage,
  };
  return call;
}

/** The call for the operator's metrics (runtime/telemetry.ts): a failure is a tool_error, a question for the user none. */
function measure(call: CallState, outcome: string, bytes: number | undefined): void {
  const recorder = telemetry();
  const { tool } = call;
  const failed = outcome !== "ok" && outcome !== "InputRequired";
  recorder.operation(
    "tools/call",
    tool.name,
    (performance.now() - call.startedAt) / 1000,
    failed ? "tool_error" : undefined,
  );
  const direction = directionOf(tool.name);
  if (direction && bytes) recorder.transferred(tool.name, direction, bytes);
  call.span.end(failed ? "tool_error" : undefined);
}

/** The caller's trace context: the request's params._meta, else the HTTP request's headers (left by the edge). */
export function traceParentOf(request: ServerContext): TraceParent | undefined {
  const meta = request.mcpReq._meta as { traceparent?: unknown; tracestate?: unknown } | undefined;
  if (typeof meta?.traceparent === "string")
    return {
      traceparent: meta.traceparent,
      ...(typeof meta.tracestate === "string" ? { tracestate: meta.tracestate } : {}),
    };
  return request.http?.authInfo?.extra?.[TRACE_HEADERS] as TraceParent | undefined;
}

/** Progress to the client, where it asked with a progress token (else nothing is sent). */
export function clientProgress(request: ServerContext, signal: AbortSignal): ProgressReporter {
  const { mcpReq } = request;
  const token = mcpReq._meta?.progressToken;
  if (token === undefined) return NO_PROGRESS;
  return progressReporter(
    (params) => mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, ...params } }),
    signal,
  );
}

const optionalBytes = (bytes: number | undefined) => (bytes === undefined ? {} : { bytes });
