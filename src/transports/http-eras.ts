/**
 * One MCP message served by the protocol era it speaks, each by an MCP
 * server of its own (deps.serverFor):
 * - 2026-07-28 (the request names its protocol in its _meta): the SDK's
 *   per-request handler builds the server, answers (JSON, or SSE once the
 *   call sends progress) and closes it.
 * - 2025: the SDK's web-standard transport without sessions, the answers as
 *   before the v2 SDK. A plain call is answered with JSON; one that sends
 *   progress, or one from a client that may be asked to confirm (its sealed
 *   session id says it declared elicitation: legacy-questions.ts), gets an
 *   SSE stream, and the call gets a LegacyAsk that asks on it.
 */
import {
  createMcpHandler,
  type JSONRPCMessage,
  type McpServer,
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { Caller } from "../auth/index.ts";
import { LEGACY_ASK } from "../mcp/confirmations.ts";
import { TASKS_DECLARED } from "../mcp/jobs/tasks.ts";
import type { Logger } from "../runtime/log.ts";
import type { SendLeases } from "../runtime/memory.ts";
import { logValue } from "../runtime/redact.ts";
import { TRACE_HEADERS, type TraceParent } from "../runtime/telemetry.ts";
import type { LegacyQuestions } from "./legacy-questions.ts";

/** The request a server is asked for: its protocol era and JSON-RPC method. */
export type ServedRequest = { era: "2025" | "2026"; method: string | undefined };
/** What a 2026-07-28 request's server is built from: handed through the SDK's handler as the request's auth info. */
type ModernRequest = { caller: Caller; leases: SendLeases; method: string | undefined; [TRACE_HEADERS]?: TraceParent };

/** The JSON-RPC message of one POST, as far as serving it needs. */
export type RpcMessage = {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: {
    name?: string;
    arguments?: Record<string, unknown>;
    capabilities?: unknown;
    _meta?: { progressToken?: unknown; [PROTOCOL_VERSION_META_KEY]?: unknown };
  };
};

export interface EraServing {
  /** The SDK's answer: JSON, or an SSE stream. */
  served: Promise<Response>;
  /** Closes the request's server (cancelling its calls); a 2026 request's closes itself. */
  close: () => void;
  /** The Mcp-Session-Id for a 2025 initialize's answer, when the client declared something it carries. */
  sessionId?: string;
}

export interface EraDeps {
  serverFor(caller: Caller, leases: SendLeases, request: ServedRequest): McpServer;
  questions: LegacyQuestions;
  log: Logger;
}

/** A server of one POST's message, by era. */
export function eraServing(deps: EraDeps) {
  const { questions } = deps;
  const modern = createMcpHandler(
    (ctx) => {
      const { caller, leases, method } = ctx.authInfo!.extra as ModernRequest;
      return deps.serverFor(caller, leases, { era: "2026", method });
    },
    { legacy: "reject", onerror: (err) => deps.log.debug(`http: ${logValue(err.message)}`) },
  );
  return async (
    req: Request,
    body: unknown,
    message: RpcMessage | undefined,
    caller: Caller,
    leases: SendLeases,
  ): Promise<EraServing> => {
    const trace = traceHeaders(req);
    if (message?.params?._meta?.[PROTOCOL_VERSION_META_KEY] !== undefined) {
      const extra: ModernRequest = { caller, leases, method: message.method, ...trace };
      const authInfo = { token: "", clientId: caller.id, scopes: [], extra };
      return { served: modern.fetch(req, { parsedBody: body, authInfo }), close: () => {} };
    }
    const mcp = deps.serverFor(caller, leases, { era: "2025", method: message?.method });
    const close = () => void mcp.close().catch(() => {});
    const call = message?.method === "tools/call";
    const declared = questions.declared(req.headers.get("mcp-session-id"), caller.id);
    const askable = call && declared.elicitation;
    // A client that declared tasks in its initialize (which reached some replica) gets the tools that take them marked.
    const tasksMarked = message?.method === "tools/list" && declared.tasks;
    const wantsProgress = call && message.params?._meta?.progressToken !== undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !wantsProgress && !askable,
    });
    await mcp.connect(transport);
    // The client went away: closing the server cancels its calls (their clean-up still runs).
    req.signal.addEventListener("abort", close, { once: true });
    const ask =
      askable &&
      questions.askerFor(caller.id, (request) =>
        transport.send(request as JSONRPCMessage, { relatedRequestId: message.id ?? undefined }),
      );
    const authInfo = (ask || tasksMarked || trace[TRACE_HEADERS]) && {
      token: "",
      clientId: caller.id,
      scopes: [],
      extra: { ...(ask ? { [LEGACY_ASK]: ask } : {}), ...(tasksMarked ? { [TASKS_DECLARED]: true } : {}), ...trace },
    };
    return {
      served: transport.handleRequest(req, { parsedBody: body, ...(authInfo ? { authInfo } : {}) }),
      close: () => {
        req.signal.removeEventListener("abort", close);
        close();
      },
      ...(message?.method === "initialize" && {
        sessionId: questions.sessionFor(caller.id, message.params?.capabilities),
      }),
    };
  };
}

/** The W3C trace context headers, for the call's span (runtime/telemetry.ts); a message's own _meta wins over them. */
function traceHeaders(req: Request): { [TRACE_HEADERS]?: TraceParent } {
  const traceparent = req.headers.get("traceparent");
  if (!traceparent) return {};
  const tracestate = req.headers.get("tracestate");
  return { [TRACE_HEADERS]: { traceparent, ...(tracestate ? { tracestate } : {}) } };
}
