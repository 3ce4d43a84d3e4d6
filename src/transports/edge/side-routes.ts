/**
 * What the HTTP server answers beside /mcp, before and without any token:
 * /healthz (the process serves), /readyz (this replica should get traffic:
 * readiness.ts), the OAuth protected resource metadata (RFC 9728) and the
 * Server Card and catalog (discovery.ts). None names an address, a secret
 * or a caller.
 */
import type { HttpConfig } from "../../config/http-config.ts";
import { type discovery, protectedResourceMetadata } from "../discovery.ts";
import { json } from "../http-replies.ts";
import type { Readiness } from "../readiness.ts";
import { type Limiter, SharedCallerLimits } from "../shared-limits.ts";

export const METADATA_PATH = "/.well-known/oauth-protected-resource";

export interface SideRoutes {
  config: HttpConfig;
  resource: URL;
  limits: Limiter;
  discover: ReturnType<typeof discovery>;
  readiness?: (() => Promise<Readiness>) | undefined;
  stopping(): boolean;
}

/** The answer for `path` when it is not MCP's, else undefined. */
export async function sideRoute(req: Request, path: string, routes: SideRoutes): Promise<Response | undefined> {
  const { config, resource, limits } = routes;
  const stopping = routes.stopping();
  // The shared state store's status is shown, not judged: the server serves without it (limits fail open).
  if (path === "/healthz" && req.method === "GET")
    return json(stopping ? 503 : 200, {
      status: stopping ? "stopping" : "ok",
      ...(limits instanceof SharedCallerLimits ? { state_store: limits.stateStore() } : {}),
    });
  if (path === "/readyz" && req.method === "GET") return readyAnswer(stopping, routes.readiness);
  if (config.oauth && (path === METADATA_PATH || path === `${METADATA_PATH}${resource.pathname}`))
    return json(200, protectedResourceMetadata(config), { "access-control-allow-origin": "*" });
  return routes.discover.answer(path, req) ?? undefined;
}

/** /readyz: 200 while every check passes and the server is not stopping, else 503; which check failed, nothing more. */
async function readyAnswer(stopping: boolean, readiness: SideRoutes["readiness"]): Promise<Response> {
  if (stopping) return json(503, { ready: false, stopping: true });
  const checked = readiness ? await readiness() : { ready: true };
  return json(checked.ready ? 200 : 503, checked);
}
