/**
 * MCP over Streamable HTTP at /mcp, stateless: every POST gets a fresh MCP
 * server (the tools its caller may use) and the SDK's web-standard
 * transport without sessions, so any replica behind a load balancer can
 * answer any request and nothing is kept between requests. A plain call is
 * answered with JSON; a call that asked for progress gets an SSE stream.
 *
 * In front of the MCP layer: Host and Origin checks (DNS rebinding), CORS
 * only for configured origins, a bounded body, authentication (auth/), a 403
 * for a call outside the caller's scopes, one access-log line per request,
 * /healthz and the OAuth protected resource metadata (RFC 9728).
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Authenticator, Caller } from "../auth/index.ts";
import { isLoopbackHostHeader, type HttpConfig, type Scope } from "../http-config.ts";
import type { Logger } from "../log.ts";
import { logValue } from "../redact.ts";

/** A put_object of 4 MiB is ~5.6 MB of JSON: room for it, not for much more. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MCP_PATH = "/mcp";
const METADATA_PATH = "/.well-known/oauth-protected-resource";

export interface HttpDeps {
  config: HttpConfig;
  auth: Authenticator;
  /** A fresh MCP server for one request, with the tools this caller may use. */
  serverFor(caller: Caller): McpServer;
  /** The permission a tools/call needs that this caller lacks, if any (policy.ts decides). */
  missingScope(name: string, args: Record<string, unknown>, caller: Caller): Scope | undefined;
  log: Logger;
}

export interface HttpServer {
  url: string;
  /** Stops accepting, waits up to `graceMs` for requests in flight, then `cancel`s what is left. */
  shutdown(graceMs: number, cancel: () => Promise<void>): Promise<void>;
}

type RpcMessage = { jsonrpc?: string; id?: string | number | null; method?: string; params?: { name?: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: unknown } } };

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
const rpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}, id: RpcMessage["id"] = null) =>
  json(status, { jsonrpc: "2.0", error: { code, message }, id }, headers);

export function startHttpServer(deps: HttpDeps): HttpServer {
  const { config, auth, log } = deps;
  const resource = new URL(config.resourceUrl);
  const metadataUrl = `${resource.origin}${METADATA_PATH}${resource.pathname === "/" ? "" : resource.pathname}`;
  const scopeName = (s: Scope) => config.oauth?.scopeNames[s] ?? `s3:${s}`;
  const challenge = (extra = "") => `Bearer ${config.oauth ? `resource_metadata="${metadataUrl}"` : 'realm="store-mcp-server"'}${extra}`;
  let inFlight = 0;
  let stopping = false;
  let drained: (() => void) | undefined;

  const hostAllowed = (host: string | null) => !!host && (isLoopbackHostHeader(host) || config.allowedHosts.includes(host.toLowerCase()));
  const originAllowed = (origin: string | null) => origin === null || config.allowedOrigins.includes(origin.toLowerCase());
  const cors = (origin: string | null): Record<string, string> =>
    origin && config.corsOrigins.includes(origin.toLowerCase())
      ? { "access-control-allow-origin": origin, vary: "Origin", "access-control-expose-headers": "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version" }
      : {};

  async function handleMcp(req: Request, server: Bun.Server<undefined>, note: (rpc: string, caller?: string) => void): Promise<Response> {
    const origin = req.headers.get("origin");
    // DNS rebinding: a browser page under another name that resolves here.
    if (!hostAllowed(req.headers.get("host"))) return rpcError(403, -32000, "Forbidden: this Host is not allowed (--allowed-host / STORE_ALLOWED_HOSTS).");
    if (!originAllowed(origin)) return rpcError(403, -32000, "Forbidden: this Origin is not allowed (--allowed-origin / STORE_ALLOWED_ORIGINS).");
    const corsHeaders = cors(origin);
    if (req.method === "OPTIONS") {
      if (!corsHeaders["access-control-allow-origin"]) return new Response(null, { status: 405 });
      return new Response(null, {
        status: 204,
        headers: { ...corsHeaders, "access-control-allow-methods": "POST, OPTIONS", "access-control-allow-headers": "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID", "access-control-max-age": "600" },
      });
    }
    const who = await auth.authenticate(req.headers.get("authorization"));
    if (!who.ok) {
      // A quoted-string may not carry quotes or control characters (RFC 9110).
      const error = who.error ? `, error="${who.error}", error_description="${who.description.replace(/["\\\x00-\x1f]/g, "'")}"` : "";
      return rpcError(401, -32001, `Unauthorized: ${who.description}.`, { ...corsHeaders, "www-authenticate": challenge(error) });
    }
    const caller = who.caller;
    // Stateless: no standalone SSE stream to resume, no session to delete.
    if (req.method !== "POST") return rpcError(405, -32000, "Method not allowed: this server is stateless; send JSON-RPC with POST.", { ...corsHeaders, allow: "POST" });
    if (Number(req.headers.get("content-length") ?? 0) > MAX_BODY_BYTES) return rpcError(413, -32600, `Request body larger than ${MAX_BODY_BYTES} bytes.`, corsHeaders);
    let body: unknown;
    try {
      body = JSON.parse(await req.text());
    } catch {
      return rpcError(400, -32700, "Parse error: the body is not JSON.", corsHeaders);
    }
    const messages = (Array.isArray(body) ? body : [body]) as RpcMessage[];
    const first = messages[0];
    note(first?.method === "tools/call" ? `tools/call ${first.params?.name ?? "?"}` : (first?.method ?? "response"), caller.id);
    for (const m of messages) {
      if (m?.method !== "tools/call" || typeof m.params?.name !== "string") continue;
      const missing = deps.missingScope(m.params.name, m.params.arguments ?? {}, caller);
      if (missing) {
        const error = `, error="insufficient_scope", scope="${scopeName(missing)}", error_description="this call needs the ${scopeName(missing)} scope"`;
        return rpcError(403, -32003, `Forbidden: ${m.params.name} with these arguments needs the ${scopeName(missing)} scope.`, { ...corsHeaders, "www-authenticate": challenge(error) }, m.id);
      }
    }
    // A long tool call sends nothing until it is done: no idle cut for an authenticated call.
    server.timeout(req, 0);
    const wantsProgress = messages.some((m) => m?.method === "tools/call" && m.params?._meta?.progressToken !== undefined);
    const mcp = deps.serverFor(caller);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress });
    await mcp.connect(transport);
    // The client went away: closing the server cancels its calls (their clean-up still runs).
    const onGone = () => void mcp.close().catch(() => {});
    req.signal.addEventListener("abort", onGone, { once: true });
    const res = await transport.handleRequest(req, { parsedBody: body });
    const headers = new Headers(res.headers);
    for (const [k, v] of Object.entries(corsHeaders)) headers.set(k, v);
    if (!res.body || !res.headers.get("content-type")?.includes("text/event-stream")) {
      req.signal.removeEventListener("abort", onGone);
      await mcp.close().catch(() => {});
      return new Response(res.body, { status: res.status, headers });
    }
    // SSE: the server lives until the stream has carried the answer.
    const closing = new TransformStream<Uint8Array, Uint8Array>({ flush: () => void mcp.close().catch(() => {}) });
    return new Response(res.body.pipeThrough(closing), { status: res.status, headers });
  }

  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    // Unauthenticated or idle connections are cut; an authenticated call lifts it (above).
    idleTimeout: 120,
    async fetch(req, server) {
      const started = performance.now();
      const url = new URL(req.url);
      let rpc = "";
      let callerId = "-";
      const note = (what: string, caller?: string) => {
        rpc = what;
        callerId = caller ?? callerId;
      };
      inFlight++;
      let res: Response;
      try {
        if (url.pathname === "/healthz" && req.method === "GET") res = json(stopping ? 503 : 200, { status: stopping ? "stopping" : "ok" });
        else if (config.oauth && (url.pathname === METADATA_PATH || url.pathname === `${METADATA_PATH}${resource.pathname}`)) res = json(200, protectedResourceMetadata(config), { "access-control-allow-origin": "*" });
        else if (url.pathname === MCP_PATH || url.pathname === resource.pathname) res = await handleMcp(req, server, note);
        else res = json(404, { error: "not found", hint: `MCP is served at ${MCP_PATH}` });
      } catch (err) {
        log.error(`http ${req.method} ${url.pathname}: ${logValue(String((err as Error)?.message ?? err))}`);
        res = rpcError(500, -32603, "Internal error.");
      }
      const done = () => {
        inFlight--;
        if (inFlight === 0) drained?.();
        log.info(`http ${req.method} ${url.pathname}${rpc ? ` ${logValue(rpc)}` : ""} ${res.status} ${Math.round(performance.now() - started)}ms caller=${logValue(callerId)}`);
      };
      if (!res.body || !res.headers.get("content-type")?.includes("text/event-stream")) {
        done();
        return res;
      }
      // A stream is in flight until it ends (or the client leaves).
      let ended = false;
      const end = () => {
        if (!ended) (ended = true), done();
      };
      req.signal.addEventListener("abort", end, { once: true });
      return new Response(res.body.pipeThrough(new TransformStream({ flush: end })), { status: res.status, headers: res.headers });
    },
  });

  return {
    url: `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}${MCP_PATH}`,
    async shutdown(graceMs, cancel) {
      stopping = true;
      // Stop accepting: a load balancer's retry lands on another replica.
      void server.stop(false);
      if (inFlight > 0) {
        await Promise.race([new Promise<void>((resolve) => (drained = resolve)), new Promise((resolve) => setTimeout(resolve, graceMs))]);
      }
      await cancel();
      await server.stop(true);
    },
  };
}

/** RFC 9728: which authorization server issues tokens for this resource, and the scopes it understands. */
function protectedResourceMetadata(config: HttpConfig): Record<string, unknown> {
  const names = config.oauth!.scopeNames;
  return {
    resource: config.resourceUrl,
    authorization_servers: [config.oauth!.issuer],
    scopes_supported: [names.read, names.write, names.delete],
    bearer_methods_supported: ["header"],
    resource_name: "store-mcp-server",
  };
}
