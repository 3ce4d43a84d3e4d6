/**
 * One tool call, in the order it happens: the store the call names (and a
 * copy's source store), the required audit log, the store's own refusal
 * (read-only, deletes, allowlist, scopes, local files), the caller's policy
 * (the storages every key of the call is checked against), the context the
 * tool gets, the memory it may hold, the tool itself (tracked for shutdown),
 * the response fit, then the audit line and the answer — or, for any
 * failure, one ActionableError named for its store, logged, audited and
 * answered as an error result. A call that can run long races the call
 * budget: when the budget wins, the answer is a job handle and the running
 * work (its promise, abort controller, progress) goes to the job registry
 * (jobs.ts); tool files know nothing of it. Registration (server.ts) only
 * loops over the tools.
 */
import {
  type CallToolResult,
  type InputRequiredResult,
  isInputRequiredResult,
  type ServerContext,
} from "@modelcontextprotocol/server";

type Answer = CallToolResult | InputRequiredResult;

import { type CallerAccess, callGuard } from "../access/index.ts";
import type { LocalFiles } from "../local/index.ts";
import { type AuditLog, auditBytes, auditTarget } from "../runtime/audit.ts";
import { ActionableError, isAbortError } from "../runtime/errors.ts";
import type { CallTracker } from "../runtime/lifecycle.ts";
import type { Logger } from "../runtime/log.ts";
import type { ByteBudget, LeaseHolder } from "../runtime/memory.ts";
import { NO_PROGRESS, progressReporter } from "../runtime/progress.ts";
import { logValue, scrubSecrets } from "../runtime/redact.ts";
import { CONTENT_BUDGET_BYTES, fitsResponse, MAX_RESPONSE_BYTES } from "../runtime/response-budget.ts";
import type { Storage } from "../storage/index.ts";
import { EVERY_CARD } from "../tools/cards.ts";
import type { StoreInfo, ToolContext, ToolDefinition } from "../tools/types.ts";
import { callerJobs, handBack, handsBack, recording, unconfirmedJob } from "./call-jobs.ts";
import { InputNeeded, type UserConfirmation } from "./confirmations.ts";
import type { JobProgress, JobRegistry, Recheck } from "./jobs.ts";
import { nameStore, type Stores, sourceContext, storeContext } from "./stores.ts";
import { noteHandedBackAsTask, TASK_GRACE_MS, taskAsked } from "./tasks.ts";

/** Each tool's bucket and key arguments, from its card (found in its schema when the binary was built). */
const ADDRESSES = new Map(EVERY_CARD.map((card) => [card.name, card.addresses]));

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

/** The handler the SDK runs for `tool`; `meta` goes on every answer (the object browser's list of the caller's tools). */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a known exception (docs/architecture.md), to be split into named steps
export function toolCall(tool: ToolDefinition, env: CallEnvironment, meta: { _meta?: Record<string, unknown> }) {
  const { stores, calls, log } = env;
  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a known exception (docs/architecture.md), to be split into named steps
  return async (given: Record<string, unknown>, request: ServerContext): Promise<Answer> => {
    const { mcpReq } = request;
    const { store: storeName, source_store: sourceName, ...args } = given;
    // The work's own signal: the client's cancel reaches it only while the call is open (a job outlives the call).
    const work = new AbortController();
    const clientCancelled = () => work.abort(mcpReq.signal.reason);
    if (mcpReq.signal.aborted) clientCancelled();
    else mcpReq.signal.addEventListener("abort", clientCancelled, { once: true });
    const signal = calls.callSignal(work.signal);
    const token = mcpReq._meta?.progressToken;
    const toClient =
      token === undefined
        ? NO_PROGRESS
        : progressReporter(
            (params) =>
              mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, ...params } }),
            signal,
          );
    const jobProgress: JobProgress = {};
    const progress = recording(toClient, jobProgress);
    const startedAt = new Date();
    const started = performance.now();
    const about = describeCall(tool.name, given);
    // A call that may become a job: one that can run long, or any that asked for a task (2025-11-25 asks for one at once).
    const taskShape = env.jobs && !tool.aboutJobs ? taskAsked(request) : undefined;
    const canBeJob = env.jobs !== undefined && (taskShape === "2025" || handsBack(tool, args));
    let scope = stores.default;
    let adopted = false;
    let jobId: string | undefined;
    const audit = (outcome: string, structured?: unknown) =>
      env.audit?.write({
        caller: env.caller,
        action: tool.name,
        ...(stores.several ? { store: scope.info.name } : {}),
        ...auditTarget(args, typeof sourceName === "string" ? sourceName : undefined),
        outcome,
        ...optionalBytes(auditBytes(tool.name, structured)),
        duration_ms: Math.round(performance.now() - started),
        request_id: mcpReq.id,
      });
    const answer = (async (): Promise<Answer> => {
      let release: (() => void) | undefined;
      let handedOver = false;
      try {
        // Keys a tool derives (a bulk job's prefix + path, a listed key) get the checks its store gives the keys a caller names.
        scope = stores.pick(storeName);
        const unaudited = env.audit?.refusal();
        if (unaudited) throw unaudited;
        const source = sourceName === undefined ? undefined : stores.pick(sourceName);
        const refusal = stores.refusal(tool, args, scope, source);
        if (refusal) throw refusal;
        // The operator's allowlist and key rules, for every bucket and key the arguments name: before memory, a question or the tool.
        stores.checkAddresses(ADDRESSES.get(tool.name), args, scope, source);
        // A per-caller policy: the stores as this call may use them (every key it touches checked).
        const guard = env.access && !tool.aboutJobs ? callGuard(env.access, tool, args) : (storage: Storage) => storage;
        const ctx: ToolContext = {
          ...storeContext(scope),
          storage: guard(scope.storage, scope.info.name),
          files: env.files,
          signal,
          log,
          contentBudget: CONTENT_BUDGET_BYTES,
          confirmWithUser: env.confirmWithUser(request, signal),
          progress,
          // Resource links are s3:// URIs, which name objects of the default store.
          resourceLinks: env.resourceLinks && scope === stores.default,
          ...(env.storeInfos ? { stores: env.storeInfos } : {}),
          sourceStore: sourceContext(source, scope, guard),
          ...(env.jobs ? { jobs: callerJobs(env.jobs, env.caller, env.recheck), callBudgetMs: env.callBudgetMs } : {}),
          ...(env.querySpillBytes ? { querySpillBytes: env.querySpillBytes } : {}),
          call: { owner: env.caller, job: () => jobId },
          ...(env.shared ? { share: env.shared } : {}),
        };
        // A call that may become a job is refused up front while the caller has as many running as they may.
        if (canBeJob) await env.jobs!.admit(env.caller);
        release = await env.memory.reserve(tool.heldBytes?.(args as never) ?? 0, signal);
        const out = await calls.track(tool.handler(args as never, ctx));
        const result = { content: out.content, structuredContent: out.structured as Record<string, unknown>, ...meta };
        // Last line of defence: tools fit their content to the budget; nothing larger may reach the client.
        if (!fitsResponse(result)) throw responseTooLarge(tool.name);
        log.debug(`${about} ok in ${Math.round(performance.now() - started)} ms`);
        audit("ok", out.structured);
        // The reservation is held until the answer is written, where the transport says when that is (a job's answer is never written by this request).
        if (release && env.leases && !signal.aborted && !adopted) {
          env.leases.hold(mcpReq.id, release);
          handedOver = true;
        }
        return result as CallToolResult;
      } catch (err) {
        // 2026-07-28: the user has a question to answer first; the client calls again with the answer.
        if (err instanceof InputNeeded) {
          audit("InputRequired");
          return err.result;
        }
        const failure = nameStore(asActionable(err), scope, stores);
        const ms = Math.round(performance.now() - started);
        if (failure.code === "InternalError")
          log.error(`${about} failed in ${ms} ms: ${scrubSecrets(String((err as Error)?.stack ?? err))}`);
        else
          log.debug(`${about} failed in ${ms} ms: ${failure.code}${failure.status ? ` (HTTP ${failure.status})` : ""}`);
        audit(failure.code);
        return { content: [{ type: "text" as const, text: scrubSecrets(failure.describe()) }], isError: true, ...meta };
      } finally {
        progress.close(); // nothing after the answer
        if (!handedOver) release?.();
      }
    })();
    // A call that can run long and is not done within the budget answers with a job handle; the work goes on. One that
    // asked for a task gets it sooner: a 2026-07-28 one after a short grace (a quick call answers as usual), a
    // 2025-11-25 one at once (it must answer with a task).
    const budget = !canBeJob
      ? undefined
      : taskShape === "2025"
        ? 0
        : taskShape === "2026"
          ? Math.min(TASK_GRACE_MS, env.callBudgetMs)
          : env.callBudgetMs;
    try {
      if (budget === undefined) return await answer;
      if (budget > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const first = await Promise.race([
          answer,
          new Promise<"budget">((resolve) => (timer = setTimeout(() => resolve("budget"), budget))),
        ]);
        clearTimeout(timer);
        if (first !== "budget") return first;
      }
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
      log.debug(`${about} handed back as ${job.id} after ${Math.round(performance.now() - started)} ms`);
      // The task's answer replaces this one on its way out (sdk-hooks.ts); this one is what the SDK checks.
      if (taskShape) noteHandedBackAsTask(request, job);
      return handBack(job, budget, meta);
    } finally {
      if (!adopted) mcpReq.signal.removeEventListener("abort", clientCancelled);
    }
  };
}

/**
 * `get_object bucket="b" key="k"` for debug logs; never file contents. Values
 * come from the model: quoted and escaped (a newline cannot forge a log line)
 * and scrubbed of secrets.
 */
export function describeCall(name: string, args: Record<string, unknown>): string {
  const parts = [name];
  for (const [field, label] of [
    ["store", "store"],
    ["bucket_name", "bucket"],
    ["object_key", "key"],
    ["prefix", "prefix"],
    ["mode", "mode"],
  ] as const) {
    const value = args[field];
    if (typeof value === "string") parts.push(`${label}=${logValue(value)}`);
  }
  return parts.join(" ");
}

const optionalBytes = (bytes: number | undefined) => (bytes === undefined ? {} : { bytes });

function responseTooLarge(tool: string): ActionableError {
  return new ActionableError({
    resource: tool,
    code: "ResponseTooLarge",
    message: `The result would be larger than ${MAX_RESPONSE_BYTES} bytes, more than MCP clients can read in one message.`,
    hint: "ask for less in one call (a smaller max_keys or max_content_size), or use get_object mode download for whole objects.",
  });
}

function asActionable(err: unknown): ActionableError {
  if (err instanceof ActionableError) return err;
  if (isAbortError(err)) {
    return new ActionableError({
      resource: "request",
      code: "Cancelled",
      message: "The request was cancelled.",
      hint: "call again if it is still wanted.",
    });
  }
  return new ActionableError({
    resource: "server",
    code: "InternalError",
    message: `An unexpected error occurred: ${scrubSecrets(err instanceof Error ? err.message : String(err)).slice(0, 300)}`,
    hint: "retry once; if it happens again, report it with the server's log.",
  });
}
