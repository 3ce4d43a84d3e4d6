/**
 * MCP over Streamable HTTP at /mcp, stateless: every POST is answered by an
 * MCP server of its own (the tools its caller may use; remote.ts keeps it for
 * the caller's next request), by the era it speaks (http-eras.ts), so any
 * replica behind a load balancer can answer any request and no session is
 * kept between requests. A 2025 client's answer to a question a call asked it
 * is taken here, or relayed to the replica that asked (legacy-questions.ts).
 * The calls that arrive in one event-loop turn start together
 * (runtime/turn.ts).
 *
 * In front of the MCP layer: Host and Origin checks (DNS rebinding), CORS
 * only for configured origins (http-browser-checks.ts), a bounded body,
 * authentication (auth/), a 403 for a call outside the caller's scopes and an
 * error result for a tool outside their policy (http-call-refusal.ts), 429
 * for a caller over its limits (caller-limits.ts), one access-log line per request,
 * /healthz and the OAuth protected resource metadata (RFC 9728).
 *
 * One JSON-RPC message per POST: protocol 2025-06-18 dropped batching, and a
 * batch's answers are held until the last is done, past every per-call
 * memory bound. So a request is one call, one answer, one log line, and the
 * call's memory reservation lasts until its answer is written (http-answer.ts).
 */
import { type McpServer, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import type { Authenticator, Caller } from "../auth/index.ts";
import type { HttpConfig, Scope } from "../config/http-config.ts";
import type { Logger } from "../runtime/log.ts";
import { SendLeases } from "../runtime/memory.ts";
import { logValue } from "../runtime/redact.ts";
import { nextTurn } from "../runtime/turn.ts";
import { discovery, protectedResourceMetadata } from "./discovery.ts";
import { answerBody, GraceWaiters, SLICE_BYTES, sseMessage } from "./http-answer.ts";
import { browserChecks } from "./http-browser-checks.ts";
import { type CallRules, callRefusal } from "./http-call-refusal.ts";
import { eraServing, type RpcMessage, type ServedRequest } from "./http-eras.ts";
import { json, rpcError } from "./http-replies.ts";
import { type ClientResponse, LegacyQuestions } from "./legacy-questions.ts";
import type { Readiness } from "./readiness.ts";
import { callerLimitsFor, type Limiter, SharedCallerLimits } from "./shared-limits.ts";

/** The 2026-era revisions served per request (the SDK's SUPPORTED_PROTOCOL_VERSIONS lists only those of the handshake). */
export const MODERN_PROTOCOL_VERSIONS = ["2026-07-28"] as const;
/** A put_object of 4 MiB is ~5.6 MB of JSON: room for it, not for much more. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MCP_PATH = "/mcp";
const METADATA_PATH = "/.well-known/oauth-protected-resource";

/** What the transport is given; `CallRules` refuse a tools/call before any MCP server sees it (http-call-refusal.ts). */
export interface HttpDeps extends CallRules {
  config: HttpConfig;
  auth: Authenticator;
  /**
   * An MCP server for one request, with the tools this caller may use; it hands its calls' memory reservations to
   * `leases`. It serves this request only and is closed when done (remote.ts may keep it for the next one).
   */
  serverFor(caller: Caller, leases: SendLeases, request: ServedRequest): McpServer;
  log: Logger;
  /** The per-caller limits (remote.ts makes them, so jobs can hold slots); made here from the config when absent. */
  limits?: Limiter;
  /** Questions to 2025 clients and their answers (remote.ts shares them between replicas); this replica's own when absent. */
  questions?: LegacyQuestions;
  /** /readyz's checks (readiness.ts); without them, ready while not stopping. */
  readiness?: () => Promise<Readiness>;
}

export interface HttpServer {
  url: string;
  /** Stops accepting, waits up to `graceMs` for requests in flight, answers what is left with a "shutting down" error, then `cancel`s it. */
  shutdown(graceMs: number, cancel: () => Promise<void>): Promise<void>;
}

/** Told what outlives the handler: the call's reservations, the server to close after a stream (SSE), the request id. */
type Answered = (leases: SendLeases, close: (() => void) | undefined, id: RpcMessage["id"] | undefined) => void;

export type { RpcMessage, ServedRequest };

const SHUTTING_DOWN =
  "The server is shutting down: this call was stopped before it finished (nothing partial is left in sight; a large transfer is kept to resume). Retry it; another replica or the restarted server will answer.";
/** A finished answer sits in memory until written: a reservation is held at most this long, whatever happens. */
const MAX_LEASE_MS = 10 * 60_000;
/** JSON answers up to this size are sent as bytes at once (the slice a streamed answer hands over per pull). */
const SMALL_ANSWER_BYTES = SLICE_BYTES;
/** The answers sent that way: written when handed to Bun, as far as the memory budget and the access log care. */
const fixedAnswers = new WeakSet<Response>();

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a known exception (docs/architecture.md), to be split into named steps
export function startHttpServer(deps: HttpDeps): HttpServer {
  const { config, auth, log } = deps;
  // Counted in the shared state store when there is one (every replica enforces one limit), else here.
  const limits: Limiter = deps.limits ?? callerLimitsFor(config, log);
  const questions = deps.questions ?? new LegacyQuestions(crypto.getRandomValues(new Uint8Array(32)));
  const resource = new URL(config.resourceUrl);
  const serveByEra = eraServing({ serverFor: deps.serverFor, questions, log });
  // The Server Card and the catalog: public, before any token is asked for.
  const discover = discovery(
    config.resourceUrl,
    [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS],
    config.tokens.length > 0 || config.oauth !== undefined,
  );
  const metadataUrl = `${resource.origin}${METADATA_PATH}${resource.pathname === "/" ? "" : resource.pathname}`;
  const scopeName = (s: Scope) => config.oauth?.scopeNames[s] ?? `s3:${s}`;
  const challenge = (extra = "") =>
    `Bearer ${config.oauth ? `resource_metadata="${metadataUrl}"` : 'realm="store-mcp-server"'}${extra}`;
  let inFlight = 0;
  let stopping = false;
  let drained: (() => void) | undefined;
  // Told when the shutdown grace is over, so calls still running are answered with SHUTTING_DOWN.
  const grace = new GraceWaiters();

  const browser = browserChecks(config);

  async function handleMcp(
    req: Request,
    server: Bun.Server<undefined>,
    note: (rpc: string, caller?: string) => void,
    answered: Answered,
    hold: (release: () => void) => void,
  ): Promise<Response> {
    const origin = req.headers.get("origin");
    const forbidden = browser.refusal(req);
    if (forbidden) return rpcError(403, -32000, forbidden);
    if (req.method === "OPTIONS") return browser.preflight(origin);
    const corsHeaders = browser.cors(origin);
    const who = await auth.authenticate(req.headers.get("authorization"));
    if (!who.ok) {
      // A quoted-string may not carry quotes or control characters (RFC 9110).
      const error = who.error
        ? `, error="${who.error}", error_description="${who.description.replace(/["\\\x00-\x1f]/g, "'")}"`
        : "";
      return rpcError(401, -32001, `Unauthorized: ${who.description}.`, {
        ...corsHeaders,
        "www-authenticate": challenge(error),
      });
    }
    const caller = who.caller;
    // Per caller: over the rate or the requests in flight, 429 before any work (held until the answer is written).
    const admitted = await limits.admit(caller.id);
    if (!admitted.ok) {
      note("rate limited", caller.id);
      return rpcError(
        429,
        -32000,
        `Too many requests: this caller is over its limit (${admitted.reason}). Retry after ${admitted.retryAfterS} s.`,
        { ...corsHeaders, "retry-after": String(admitted.retryAfterS) },
      );
    }
    hold(admitted.release);
    // Stateless: no standalone SSE stream to resume, no session to delete.
    if (req.method !== "POST")
      return rpcError(405, -32000, "Method not allowed: this server is stateless; send JSON-RPC with POST.", {
        ...corsHeaders,
        allow: "POST",
      });
    if (Number(req.headers.get("content-length") ?? 0) > MAX_BODY_BYTES)
      return rpcError(413, -32600, `Request body larger than ${MAX_BODY_BYTES} bytes.`, corsHeaders);
    let body: unknown;
    try {
      body = JSON.parse(await req.text());
    } catch {
      return rpcError(400, -32700, "Parse error: the body is not JSON.", corsHeaders);
    }
    if (Array.isArray(body) && body.length !== 1) {
      note(`batch of ${body.length} refused`, caller.id);
      return rpcError(
        400,
        -32600,
        "Invalid request: JSON-RPC batches are not accepted (MCP 2025-06-18 removed them); send one message per POST.",
        corsHeaders,
      );
    }
    const message = (Array.isArray(body) ? body[0] : body) as RpcMessage | undefined;
    note(
      message?.method === "tools/call" ? `tools/call ${message.params?.name ?? "?"}` : (message?.method ?? "response"),
      caller.id,
    );
    // A 2025 client's answer to a question a call asked it (legacy-questions.ts): taken here or relayed to the asker.
    if (message && message.method === undefined && questions.answered(caller.id, message as ClientResponse)) {
      note("answer", caller.id);
      return new Response(null, { status: 202, headers: corsHeaders });
    }
    if (message?.method === "tools/call" && typeof message.params?.name === "string") {
      const refused = callRefusal(deps, message as typeof message & { params: { name: string } }, caller, corsHeaders, {
        scopeName,
        header: challenge,
      });
      if (refused) return refused;
    }
    // A long tool call sends nothing until it is done: no idle cut for an authenticated call.
    server.timeout(req, 0);
    // The calls that came in this loop turn start together (turn.ts: a sixth less CPU per S3 request under load).
    await nextTurn();
    const leases = new SendLeases(MAX_LEASE_MS);
    const { served, close, sessionId } = await serveByEra(req, body, message, caller, leases);
    const waiting = grace.wait();
    const res = await Promise.race([served, waiting.ended.then(() => undefined)]).finally(waiting.forget);
    if (!res) {
      // The grace period is over and this call is still running: answer it now (shutdown cancels it next).
      close();
      return rpcError(503, -32000, SHUTTING_DOWN, corsHeaders, message?.id ?? null);
    }
    const headers = new Headers(res.headers);
    for (const [k, v] of Object.entries(corsHeaders)) headers.set(k, v);
    if (sessionId && res.ok) headers.set("mcp-session-id", sessionId);
    const sse = !!res.body && !!res.headers.get("content-type")?.includes("text/event-stream");
    // JSON: the call is done, its server can go. SSE: the server lives until the stream has carried the answer.
    if (!sse) close();
    answered(leases, sse ? close : undefined, message?.id);
    if (sse) return new Response(res.body, { status: res.status, headers });
    // A small JSON answer goes out as bytes with a Content-Length: no stream to pull slice by slice (a third of the
    // server's CPU per call under load went to streaming answers of a few hundred bytes). Large ones still stream,
    // so their memory is held until the client has taken them.
    const bytes = new Uint8Array(await res.arrayBuffer());
    const out = new Response(bytes, { status: res.status, headers });
    if (bytes.length <= SMALL_ANSWER_BYTES) fixedAnswers.add(out);
    return out;
  }

  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    // Unauthenticated or idle connections are cut; an authenticated call lifts it (above).
    idleTimeout: 120,
    // Never Bun's developer error page (source, paths, stack) for anything that escapes below.
    development: false,
    error(err) {
      log.error(`http: ${logValue(String((err as Error)?.message ?? err))}`);
      return rpcError(500, -32603, "Internal error.");
    },
    async fetch(req, server) {
      const started = performance.now();
      let path = "?";
      let rpc = "";
      let callerId = "-";
      const note = (what: string, caller?: string) => {
        rpc = what;
        callerId = caller ?? callerId;
      };
      let leases: SendLeases | undefined;
      let closeServer: (() => void) | undefined;
      let rpcId: RpcMessage["id"] = null;
      const answered: Answered = (l, close, id) => ((leases = l), (closeServer = close), (rpcId = id ?? null));
      let releaseSlot: (() => void) | undefined;
      inFlight++;
      let res: Response;
      try {
        path = new URL(req.url).pathname;
        const discovered = discover.answer(path, req);
        // The shared state store's status is shown, not judged: the server serves without it (limits fail open).
        if (path === "/healthz" && req.method === "GET")
          res = json(stopping ? 503 : 200, {
            status: stopping ? "stopping" : "ok",
            ...(limits instanceof SharedCallerLimits ? { state_store: limits.stateStore() } : {}),
          });
        else if (path === "/readyz" && req.method === "GET") res = await readyAnswer(stopping, deps.readiness);
        else if (config.oauth && (path === METADATA_PATH || path === `${METADATA_PATH}${resource.pathname}`))
          res = json(200, protectedResourceMetadata(config), { "access-control-allow-origin": "*" });
        else if (discovered) res = discovered;
        else if (path === MCP_PATH || path === resource.pathname)
          res = await handleMcp(req, server, note, answered, (release) => (releaseSlot = release));
        else res = json(404, { error: "not found", hint: `MCP is served at ${MCP_PATH}` });
      } catch (err) {
        log.error(`http ${req.method} ${logValue(path)}: ${logValue(String((err as Error)?.message ?? err))}`);
        res = rpcError(500, -32603, "Internal error.");
      }
      const status = res.status;
      const done = (how: string) => {
        inFlight--;
        if (inFlight === 0) drained?.();
        releaseSlot?.();
        leases?.settleAll();
        closeServer?.();
        const cut = how === "written" ? "" : ` (${how})`;
        log.info(
          `http ${req.method} ${path}${rpc ? ` ${logValue(rpc)}` : ""} ${status}${cut} ${Math.round(performance.now() - started)}ms caller=${logValue(callerId)}`,
        );
      };
      if (fixedAnswers.has(res) || !res.body) {
        done("written");
        return res;
      }
      // In flight until its answer is written, the client leaves, or it stops reading.
      const sse = !!res.headers.get("content-type")?.includes("text/event-stream");
      let ended = false;
      const end = (how: string) => {
        if (!ended) (ended = true), done(how);
      };
      req.signal.addEventListener("abort", () => end("gone"), { once: true });
      const waiting = sse ? grace.wait() : undefined;
      const interrupt = waiting?.ended.then(() =>
        sseMessage({ jsonrpc: "2.0", id: rpcId, error: { code: -32000, message: SHUTTING_DOWN } }),
      );
      const onEnd = (how: string) => (waiting?.forget(), end(how));
      return new Response(answerBody(res.body, { onEnd, ...(interrupt ? { interrupt } : {}) }), {
        status: res.status,
        headers: res.headers,
      });
    },
  });

  return {
    url: `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}${MCP_PATH}`,
    async shutdown(graceMs, cancel) {
      stopping = true;
      // Not ready from now on (/readyz): a load balancer that probes it stops sending before this replica stops accepting.
      if (config.shutdownUnreadyMs > 0) await Bun.sleep(config.shutdownUnreadyMs);
      // Stop accepting: a load balancer's retry lands on another replica.
      void server.stop(false);
      const settled = (ms: number) =>
        inFlight === 0
          ? Promise.resolve()
          : Promise.race([new Promise<void>((resolve) => (drained = resolve)), Bun.sleep(ms)]);
      await settled(graceMs);
      // What is still running gets its answer (and its log line), then is cancelled and cleaned up.
      grace.over();
      await cancel();
      await settled(2_000);
      await server.stop(true);
    },
  };
}

/** /readyz: 200 while every check passes and the server is not stopping, else 503; which check failed, nothing more. */
async function readyAnswer(stopping: boolean, readiness: HttpDeps["readiness"]): Promise<Response> {
  if (stopping) return json(503, { ready: false, stopping: true });
  const checked = readiness ? await readiness() : { ready: true };
  return json(checked.ready ? 200 : 503, checked);
}
