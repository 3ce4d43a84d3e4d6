/**
 * MCP over Streamable HTTP at /mcp, stateless: every POST is answered by an
 * MCP server of its own (the tools its caller may use; remote.ts keeps it for
 * the caller's next request), by the era it speaks (http-eras.ts), so any
 * replica behind a load balancer can answer any request and no session is
 * kept between requests. In front of MCP, a list of guards (edge/: Host and
 * Origin, authentication, the caller's limits, POST only, one bounded JSON
 * message, a 2025 client's answer, a call outside the caller's scopes or
 * policy; edge/guards.ts), then dispatch (edge/dispatch.ts). Beside it: /healthz, /readyz,
 * the OAuth protected resource metadata (RFC 9728) and the Server Card. One
 * access-log line per request, and a call's memory held until its answer is
 * written (edge/written.ts, http-answer.ts).
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { logValue } from "../runtime/redact.ts";
import { discovery } from "./discovery.ts";
import { dispatcher } from "./edge/dispatch.ts";
import { type EdgeRequest, firstAnswer } from "./edge/guard.ts";
import { edgeGuards } from "./edge/guards.ts";
import { sideRoute } from "./edge/side-routes.ts";
import { type InFlight, RequestRecord } from "./edge/written.ts";
import { GraceWaiters, SLICE_BYTES } from "./http-answer.ts";
import { eraServing } from "./http-eras.ts";
import { json, rpcError } from "./http-replies.ts";
import type { HttpDeps, HttpServer } from "./http-types.ts";
import { LegacyQuestions } from "./legacy-questions.ts";
import { callerLimitsFor, type Limiter } from "./shared-limits.ts";

/** The 2026-era revisions served per request (the SDK's SUPPORTED_PROTOCOL_VERSIONS lists only those of the handshake). */
export const MODERN_PROTOCOL_VERSIONS = ["2026-07-28"] as const;
/** A put_object of 4 MiB is ~5.6 MB of JSON: room for it, not for much more. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MCP_PATH = "/mcp";
const SHUTTING_DOWN =
  "The server is shutting down: this call was stopped before it finished (nothing partial is left in sight; a large transfer is kept to resume). Retry it; another replica or the restarted server will answer.";

export type { HttpDeps, HttpServer } from "./http-types.ts";

export function startHttpServer(deps: HttpDeps): HttpServer {
  const { config, log } = deps;
  const limits: Limiter = deps.limits ?? callerLimitsFor(config, log);
  const questions = deps.questions ?? new LegacyQuestions(crypto.getRandomValues(new Uint8Array(32)));
  const resource = new URL(config.resourceUrl);
  const guards = edgeGuards(deps, { limits, questions, resource, maxBodyBytes: MAX_BODY_BYTES });
  const grace = new GraceWaiters();
  const fixed = new WeakSet<Response>();
  const serveByEra = eraServing({ serverFor: deps.serverFor, questions, log });
  const dispatch = dispatcher({ serveByEra, grace, shuttingDown: SHUTTING_DOWN, smallAnswerBytes: SLICE_BYTES, fixed });
  const discover = discovery(
    config.resourceUrl,
    [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS],
    config.tokens.length > 0 || config.oauth !== undefined,
  );
  const inFlight: InFlight = { count: 0 };
  let stopping = false;

  const side = { config, resource, limits, discover, readiness: deps.readiness, stopping: () => stopping };
  const route = async (req: Request, path: string, record: RequestRecord, server: Bun.Server<undefined>) => {
    const answered = await sideRoute(req, path, side);
    if (answered) return answered;
    if (path !== MCP_PATH && path !== resource.pathname)
      return json(404, { error: "not found", hint: `MCP is served at ${MCP_PATH}` });
    const edge: EdgeRequest = { req, cors: {}, note: record.note, hold: record.hold };
    return (await firstAnswer(guards, edge)) ?? dispatch(edge, server, record.answered);
  };

  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    // Unauthenticated or idle connections are cut; an authenticated call lifts it (edge/dispatch.ts).
    idleTimeout: 120,
    // Never Bun's developer error page (source, paths, stack) for anything that escapes below.
    development: false,
    error(err) {
      log.error(`http: ${logValue(String((err as Error)?.message ?? err))}`);
      return rpcError(500, -32603, "Internal error.");
    },
    async fetch(req, server) {
      let path = "?";
      const record = new RequestRecord(req, () => path, inFlight, log);
      let res: Response;
      try {
        path = new URL(req.url).pathname;
        res = await route(req, path, record, server);
      } catch (err) {
        log.error(`http ${req.method} ${logValue(path)}: ${logValue(String((err as Error)?.message ?? err))}`);
        res = rpcError(500, -32603, "Internal error.");
      }
      return record.send(res, fixed.has(res), grace, SHUTTING_DOWN);
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
        inFlight.count === 0
          ? Promise.resolve()
          : Promise.race([new Promise<void>((resolve) => (inFlight.drained = resolve)), Bun.sleep(ms)]);
      await settled(graceMs);
      // What is still running gets its answer (and its log line), then is cancelled and cleaned up.
      grace.over();
      await cancel();
      await settled(2_000);
      await server.stop(true);
    },
  };
}
