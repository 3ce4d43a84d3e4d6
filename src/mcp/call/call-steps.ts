/**
 * The steps of one tool call, in the order CALL_STEPS runs them, then the
 * tool itself (`runTool`). Each is a small function of the call and the rest
 * of the sequence: it refuses (throws an ActionableError) before the rest
 * runs, or wraps it. What a step finds out (the stores, the caller's guard)
 * it leaves on the call for the steps after it.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { callGuard } from "../../access/index.ts";
import { ActionableError, isAbortError } from "../../runtime/errors.ts";
import { scrubSecrets } from "../../runtime/redact.ts";
import { CONTENT_BUDGET_BYTES, fitsResponse, MAX_RESPONSE_BYTES } from "../../runtime/response-budget.ts";
import type { ToolContext } from "../../tool-kit/types.ts";
import { InputNeeded } from "../confirmations.ts";
import { callerJobs } from "../jobs/call-jobs.ts";
import { nameStore, sourceContext, storeContext } from "../stores.ts";
import { addressesOf } from "./addresses.ts";
import type { Answer, CallState } from "./call-state.ts";
import type { Step } from "./compose.ts";

type CallStep = Step<CallState, Answer>;

/** Any failure becomes one error result, named for its store, logged and audited; a question for the user is answered as one. */
export const answerFailures: CallStep = async (call, next) => {
  try {
    return await next();
  } catch (err) {
    // 2026-07-28: the user has a question to answer first; the client calls again with the answer.
    if (err instanceof InputNeeded) {
      call.audit("InputRequired");
      return err.result;
    }
    const { env } = call;
    const failure = nameStore(asActionable(err), call.scope, env.stores);
    const ms = Math.round(performance.now() - call.startedAt);
    if (failure.code === "InternalError")
      env.log.error(`${call.about} failed in ${ms} ms: ${scrubSecrets(String((err as Error)?.stack ?? err))}`);
    else
      env.log.debug(
        `${call.about} failed in ${ms} ms: ${failure.code}${failure.status ? ` (HTTP ${failure.status})` : ""}`,
      );
    call.audit(failure.code);
    return { content: [{ type: "text", text: scrubSecrets(failure.describe()) }], isError: true, ...call.meta };
  } finally {
    call.progress.close(); // nothing after the answer
  }
};

/** The store the call names, and a copy's source store; an unknown name is refused. */
export const pickStores: CallStep = async (call, next) => {
  call.scope = call.env.stores.pick(call.storeName);
  if (call.sourceName !== undefined) call.source = call.env.stores.pick(call.sourceName);
  return next();
};

/** With --audit-required, no call runs while its audit line cannot be written. */
export const auditRequired: CallStep = async (call, next) => {
  const unaudited = call.env.audit?.refusal();
  if (unaudited) throw unaudited;
  return next();
};

/** The store's own refusal: read-only, deletes, admin, the caller's scopes, local files. */
export const storeRefusal: CallStep = async (call, next) => {
  const refusal = call.env.stores.refusal(call.tool, call.args, call.scope, call.source);
  if (refusal) throw refusal;
  return next();
};

/** The operator's allowlist and key rules, for every bucket and key the arguments name: before memory, a question or the tool. */
export const checkAddresses: CallStep = async (call, next) => {
  call.env.stores.checkAddresses(addressesOf(call.tool.name), call.args, call.scope, call.source);
  return next();
};

/** A per-caller policy: the stores as this call may use them (every key it touches checked). */
export const callerPolicy: CallStep = async (call, next) => {
  const { access } = call.env;
  if (access && !call.tool.aboutJobs) call.guard = callGuard(access, call.tool, call.args);
  return next();
};

/** A call that may become a job is refused up front while the caller has as many running as they may. */
export const admitJob: CallStep = async (call, next) => {
  if (call.canBeJob) await call.env.jobs!.admit(call.env.caller);
  return next();
};

/**
 * The memory the call may hold, reserved before it runs; given back when it ends, or held until its answer is written
 * where the transport says when that is (a job's answer is never written by this request).
 */
export const reserveMemory: CallStep = async (call, next) => {
  const { env, tool } = call;
  const release = await env.memory.reserve(tool.heldBytes?.(call.args as never) ?? 0, call.signal);
  let handedOver = false;
  try {
    const answer = await next();
    if (release && env.leases && !call.signal.aborted && !call.adopted()) {
      env.leases.hold(call.request.mcpReq.id, release);
      handedOver = true;
    }
    return answer;
  } finally {
    if (!handedOver) release?.();
  }
};

/** The call's audit line and debug log when it succeeded (a failure's are answerFailures'). */
export const auditSuccess: CallStep = async (call, next) => {
  const answer = await next();
  call.env.log.debug(`${call.about} ok in ${Math.round(performance.now() - call.startedAt)} ms`);
  call.audit("ok", (answer as { structuredContent?: unknown }).structuredContent);
  return answer;
};

/** Last line of defence: tools fit their content to the budget; nothing larger may reach the client. */
export const fitResponse: CallStep = async (call, next) => {
  const answer = await next();
  if (!fitsResponse(answer as CallToolResult)) throw responseTooLarge(call.tool.name);
  return answer;
};

/** The steps, in order. */
export const CALL_STEPS: readonly CallStep[] = [
  answerFailures,
  pickStores,
  auditRequired,
  storeRefusal,
  checkAddresses,
  callerPolicy,
  admitJob,
  reserveMemory,
  auditSuccess,
  fitResponse,
];

/** The tool itself, with the context its call gives it (the whole call is tracked for shutdown: tool-call.ts). */
export async function runTool(call: CallState): Promise<Answer> {
  const out = await call.tool.handler(call.args as never, contextOf(call));
  return { content: out.content, structuredContent: out.structured as Record<string, unknown>, ...call.meta };
}

/** What the tool gets: its store as the caller may use it, and the server's parts it needs. */
export function contextOf(call: CallState): ToolContext {
  const { env, scope, request, signal } = call;
  return {
    ...storeContext(scope),
    storage: call.guard(scope.storage, scope.info.name),
    files: env.files,
    signal,
    log: env.log,
    contentBudget: CONTENT_BUDGET_BYTES,
    confirmWithUser: env.confirmWithUser(request, signal),
    progress: call.progress,
    // Resource links are s3:// URIs, which name objects of the default store.
    resourceLinks: env.resourceLinks && scope === env.stores.default,
    ...(env.storeInfos ? { stores: env.storeInfos } : {}),
    sourceStore: sourceContext(call.source, scope, call.guard),
    ...(env.jobs ? { jobs: callerJobs(env.jobs, env.caller, env.recheck), callBudgetMs: env.callBudgetMs } : {}),
    call: { owner: env.caller, job: call.job },
    ...(env.querySpillBytes ? { querySpillBytes: env.querySpillBytes } : {}),
    ...(env.shared ? { share: env.shared } : {}),
  };
}

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
