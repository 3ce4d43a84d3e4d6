/**
 * What Streamable HTTP asks of a server a browser can reach: the Host
 * header checked (DNS rebinding: a page under another name that resolves
 * here), the Origin checked, CORS headers only for configured origins, and
 * their preflight (OPTIONS) answered.
 */
import { type HttpConfig, isLoopbackHostHeader } from "../config/http-config.ts";

export interface BrowserChecks {
  /** The refusal of a request from a Host or an Origin not allowed: why, with the option that allows it. */
  refusal(req: Request): string | undefined;
  /** The CORS headers for an answer to `origin` (none for an origin not configured). */
  cors(origin: string | null): Record<string, string>;
  /** The answer to a preflight (OPTIONS) from `origin`. */
  preflight(origin: string | null): Response;
}

export function browserChecks(config: HttpConfig): BrowserChecks {
  const hostAllowed = (host: string | null) =>
    !!host && (isLoopbackHostHeader(host) || config.allowedHosts.includes(host.toLowerCase()));
  const originAllowed = (origin: string | null) =>
    origin === null || config.allowedOrigins.includes(origin.toLowerCase());
  const cors = (origin: string | null): Record<string, string> =>
    origin && config.corsOrigins.includes(origin.toLowerCase())
      ? {
          "access-control-allow-origin": origin,
          vary: "Origin",
          "access-control-expose-headers": "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version",
        }
      : {};
  return {
    refusal(req) {
      if (!hostAllowed(req.headers.get("host")))
        return "Forbidden: this Host is not allowed (--allowed-host / STORE_ALLOWED_HOSTS).";
      if (!originAllowed(req.headers.get("origin")))
        return "Forbidden: this Origin is not allowed (--allowed-origin / STORE_ALLOWED_ORIGINS).";
      return undefined;
    },
    cors,
    preflight(origin) {
      const headers = cors(origin);
      if (!headers["access-control-allow-origin"]) return new Response(null, { status: 405 });
      return new Response(null, {
        status: 204,
        headers: {
          ...headers,
          "access-control-allow-methods": "POST, OPTIONS",
          "access-control-allow-headers":
            "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID",
          "access-control-max-age": "600",
        },
      });
    },
  };
}
