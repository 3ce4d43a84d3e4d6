/**
 * One tool call, in the order it happens: the store the call names (and a
 * copy's source store), the required audit log, the store's own refusal
 * (read-only, deletes, allowlist, scopes, local files), the caller's policy
 * (the storages every key of the call is checked against), the context the
 * tool gets, the memory it may hold, the tool itself (tracked for shutdown),
 * the response fit, then the audit line and the answer — or, for any
 * failure, one ActionableError named for its store, logged, audited and
 * answered as an error result. Registration (server.ts) only loops over the
 * tools; whatever a call must do next (a budget, a job) lands here.
 */
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { callGuard, type CallerAccess } from "../access/index.ts";
import type { LocalFiles } from "../local/index.ts";
import { auditBytes, auditTarget, type AuditLog } from "../runtime/audit.ts";
import { ActionableError, isAbortError } from "../runtime/errors.ts";
import type { CallTracker } from "../runtime/lifecycle.ts";
import type { Logger } from "../runtime/log.ts";
import type { ByteBudget, SendLeases } from "../runtime/memory.ts";
import { NO_PROGRESS, progressReporter } from "../runtime/progress.ts";
import { logValue, scrubSecrets } from "../runtime/redact.ts";
import { CONTENT_BUDGET_BYTES, fitsResponse, MAX_RESPONSE_BYTES } from "../runtime/response-budget.ts";
import type { Storage } from "../storage/index.ts";
import type { StoreInfo, ToolContext, ToolDefinition } from "../tools/types.ts";
import { nameStore, sourceContext, storeContext, type Stores } from "./stores.ts";

/** What every call of one server shares. */
export interface CallEnvironment {
  stores: Stores;
  /** The caller's policy (remote mode with --policy). */
  access?: CallerAccess;
  files: LocalFiles;
  log: Logger;
  calls: CallTracker;
  memory: ByteBudget;
  leases?: SendLeases;
  audit?: AuditLog;
  /** Who calls, for the audit log: a token's label, a JWT's sub, "anonymous" or "local". */
  caller: string;
  confirmWithUser: ToolContext["confirmWithUser"];
  /** resource_link items (STORE_RESOURCE_LINKS): s3:// URIs name the default store's objects, so only its calls get them. */
  resourceLinks: boolean;
  /** Every store, with several (list_stores). */
  storeInfos?: readonly StoreInfo[];
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The handler the SDK runs for `tool`; `meta` goes on every answer (the object browser's list of the caller's tools). */
export function toolCall(tool: ToolDefinition, env: CallEnvironment, meta: { _meta?: Record<string, unknown> }) {
  const { stores, calls, log } = env;
  return async (given: Record<string, unknown>, extra: Extra): Promise<CallToolResult> => {
    const { store: storeName, source_store: sourceName, ...args } = given;
    const signal = calls.callSignal(extra.signal);
    const token = extra._meta?.progressToken;
    const progress =
      token === undefined ? NO_PROGRESS : progressReporter((params) => extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, ...params } }), signal);
    const started = performance.now();
    const about = describeCall(tool.name, given);
    let scope = stores.default;
    const audit = (outcome: string, structured?: unknown) =>
      env.audit?.write({
        caller: env.caller,
        action: tool.name,
        ...(stores.several ? { store: scope.info.name } : {}),
        ...auditTarget(args, typeof sourceName === "string" ? sourceName : undefined),
        outcome,
        ...optionalBytes(auditBytes(tool.name, structured)),
        duration_ms: Math.round(performance.now() - started),
        request_id: extra.requestId,
      });
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
      // A per-caller policy: the stores as this call may use them (every key it touches checked).
      const guard = env.access ? callGuard(env.access, tool, args) : (storage: Storage) => storage;
      const ctx: ToolContext = {
        ...storeContext(scope),
        storage: guard(scope.storage, scope.info.name),
        files: env.files,
        signal,
        log,
        contentBudget: CONTENT_BUDGET_BYTES,
        confirmWithUser: env.confirmWithUser,
        progress,
        // Resource links are s3:// URIs, which name objects of the default store.
        resourceLinks: env.resourceLinks && scope === stores.default,
        ...(env.storeInfos ? { stores: env.storeInfos } : {}),
        sourceStore: sourceContext(source, scope, guard),
      };
      release = await env.memory.reserve(tool.heldBytes?.(args as never) ?? 0, signal);
      const out = await calls.track(tool.handler(args as never, ctx));
      const result = { content: out.content, structuredContent: out.structured as Record<string, unknown>, ...meta };
      // Last line of defence: tools fit their content to the budget; nothing larger may reach the client.
      if (!fitsResponse(result)) throw responseTooLarge(tool.name);
      log.debug(`${about} ok in ${Math.round(performance.now() - started)} ms`);
      audit("ok", out.structured);
      // The reservation is held until the answer is written, where the transport says when that is.
      if (release && env.leases && !signal.aborted) {
        env.leases.hold(extra.requestId, release);
        handedOver = true;
      }
      return result as CallToolResult;
    } catch (err) {
      const failure = nameStore(asActionable(err), scope, stores);
      const ms = Math.round(performance.now() - started);
      if (failure.code === "InternalError") log.error(`${about} failed in ${ms} ms: ${scrubSecrets(String((err as Error)?.stack ?? err))}`);
      else log.debug(`${about} failed in ${ms} ms: ${failure.code}${failure.status ? ` (HTTP ${failure.status})` : ""}`);
      audit(failure.code);
      return { content: [{ type: "text" as const, text: scrubSecrets(failure.describe()) }], isError: true, ...meta };
    } finally {
      progress.close(); // nothing after the answer
      if (!handedOver) release?.();
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
  for (const [field, label] of [["store", "store"], ["bucket_name", "bucket"], ["object_key", "key"], ["prefix", "prefix"], ["mode", "mode"]] as const) {
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
    return new ActionableError({ resource: "request", code: "Cancelled", message: "The request was cancelled.", hint: "call again if it is still wanted." });
  }
  return new ActionableError({
    resource: "server",
    code: "InternalError",
    message: `An unexpected error occurred: ${scrubSecrets(err instanceof Error ? err.message : String(err)).slice(0, 300)}`,
    hint: "retry once; if it happens again, report it with the server's log.",
  });
}
