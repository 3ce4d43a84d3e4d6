/**
 * The remote mode's settings (--transport http): where to listen, who may
 * call, from which hosts and origins. Validated with the rest of the
 * configuration so a user sees every problem at once; secrets (the static
 * tokens) come only from the environment, never from argv.
 */

import { checkUrl } from "./endpoint-url.ts";
import { type Env, envValue, readPositiveInt, splitList } from "./env-values.ts";
import { type OAuthCliOptions, type OAuthConfig, resolveOAuth } from "./oauth-config.ts";

export type Transport = "stdio" | "http";

export interface StaticToken {
  /** Shown in access logs instead of the token. */
  label: string;
  token: string;
}

export interface HttpConfig {
  host: string;
  port: number;
  /** The public URL of the MCP endpoint (…/mcp), as clients reach it (behind a proxy: the proxy's). */
  resourceUrl: string;
  tokens: StaticToken[];
  oauth: OAuthConfig | undefined;
  /** Host header values accepted (DNS-rebinding protection), besides localhost names on any port. */
  allowedHosts: string[];
  /** Origin header values accepted; a request without Origin (not from a browser) passes. */
  allowedOrigins: string[];
  /** Origins given by the operator: only these get CORS headers. */
  corsOrigins: string[];
  /** How long SIGTERM waits for calls in flight before cancelling them. */
  shutdownGraceMs: number;
  /** How long SIGTERM keeps accepting, not ready (/readyz 503), before it stops accepting and drains (0: at once). */
  shutdownUnreadyMs: number;
  /** Per caller: requests per second (burst), in flight, and seconds of query time an hour; 0 is off. */
  limits: { perSecond: number; burst: number; inFlight: number; querySeconds: number };
  /** --state-url: a Redis or Valkey that every replica shares (the per-caller limits are counted there); absent: per replica. */
  stateUrl?: string;
  /** STORE_CONFIRMATION_KEY: the secret replicas seal confirmations with (transports/confirmation-key.ts). Never logged. */
  confirmationKey?: string;
}

export interface HttpCliOptions extends OAuthCliOptions {
  transport?: string;
  listen?: string;
  resourceUrl?: string;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  stateUrl?: string;
}

export const DEFAULT_LISTEN = "127.0.0.1:8787";

const value = (env: Env, name: string) => envValue(env, name)?.trim();
const list = (v: string | undefined) => splitList(v, ",");

/**
 * A Host header naming this machine's loopback, on any port (a port mapping
 * or a local proxy changes the port). A rebinding attack sends the
 * attacker's own name, which these never are.
 */
export function isLoopbackHostHeader(hostHeader: string): boolean {
  const host = hostHeader.toLowerCase().replace(/:\d+$/, "");
  return isLoopback(host);
}

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function readTransport(cli: HttpCliOptions, env: Env, errors: string[]): Transport {
  const t = (cli.transport ?? value(env, "STORE_TRANSPORT") ?? "stdio").toLowerCase();
  if (t === "stdio" || t === "http") return t;
  errors.push(`transport: "${t}" must be stdio or http (--transport / STORE_TRANSPORT).`);
  return "stdio";
}

/** `host:port`, `[v6]:port` or `:port` (all interfaces); `what` names the setting in the error. */
export function parseListen(
  raw: string,
  errors: string[],
  what = { label: "listen", example: "8787", names: "--listen / STORE_LISTEN" },
): { host: string; port: number } {
  const m = raw.match(/^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/);
  const port = Number(m?.[3]);
  if (!m || port < 1 || port > 65535) {
    errors.push(
      `${what.label}: "${raw}" must be HOST:PORT, e.g. 127.0.0.1:${what.example} or 0.0.0.0:${what.example} (${what.names}).`,
    );
    return { host: "127.0.0.1", port: Number(what.example) };
  }
  return { host: m[1] ?? (m[2] || "0.0.0.0"), port };
}

/** STORE_HTTP_TOKENS: comma-separated `label:token` (or bare tokens, labelled token-1, token-2, …). */
function parseTokens(raw: string | undefined, errors: string[]): StaticToken[] {
  return list(raw).map((entry, i) => {
    const at = entry.indexOf(":");
    const token = at > 0 ? entry.slice(at + 1) : entry;
    const label = at > 0 ? entry.slice(0, at) : `token-${i + 1}`;
    if (token.length < 16)
      errors.push(
        `STORE_HTTP_TOKENS: the token labelled "${label}" is shorter than 16 characters; use a long random value (e.g. openssl rand -hex 32).`,
      );
    return { label, token };
  });
}

export function resolveHttpConfig(cli: HttpCliOptions, env: Env, errors: string[]): HttpConfig {
  const { host, port } = parseListen(cli.listen ?? value(env, "STORE_LISTEN") ?? DEFAULT_LISTEN, errors);
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const resourceRaw = cli.resourceUrl ?? value(env, "STORE_RESOURCE_URL");
  const resourceUrl =
    (resourceRaw && checkUrl(resourceRaw, "resource URL (--resource-url / STORE_RESOURCE_URL)", errors)) ||
    `http://${isLoopback(host) || host === "0.0.0.0" || host === "::" ? "localhost" : shownHost}:${port}/mcp`;
  const tokens = parseTokens(value(env, "STORE_HTTP_TOKENS"), errors);

  const oauth = resolveOAuth(cli, env, resourceUrl, errors);

  if (!isLoopback(host) && tokens.length === 0 && !oauth) {
    errors.push(
      `listen: ${shownHost}:${port} is reachable from other machines, and no authentication is configured; set STORE_HTTP_TOKENS (static bearer tokens) or --oauth-issuer (OAuth), or listen on 127.0.0.1.`,
    );
  }

  const { allowedHosts, allowedOrigins, corsOrigins } = browserChecks(cli, env, { shownHost, port, resourceUrl });
  const shutdownGraceMs = readPositiveInt(env, "STORE_SHUTDOWN_GRACE_MS", 25_000, errors);
  const shutdownUnreadyMs = readLimit(env, "STORE_SHUTDOWN_UNREADY_MS", 0, errors);

  const limits = callerLimits(env, errors);
  const stateUrl = readStateUrl(cli.stateUrl ?? value(env, "STORE_STATE_URL"), errors);
  const confirmationKey = value(env, "STORE_CONFIRMATION_KEY") || undefined;
  if (confirmationKey !== undefined && confirmationKey.length < 32)
    errors.push(
      "STORE_CONFIRMATION_KEY: shorter than 32 characters; give 32 or more random characters (e.g. openssl rand -hex 32), the same on every replica.",
    );
  return {
    host,
    port,
    resourceUrl,
    tokens,
    oauth,
    allowedHosts,
    allowedOrigins,
    corsOrigins,
    shutdownGraceMs,
    shutdownUnreadyMs,
    limits,
    ...(stateUrl ? { stateUrl } : {}),
    ...(confirmationKey ? { confirmationKey } : {}),
  };
}

/** --state-url / STORE_STATE_URL: redis:// or rediss:// (TLS), [user:password@]host:port[/db]; the password is never echoed. */
function readStateUrl(given: string | undefined, errors: string[]): string | undefined {
  if (!given) return undefined;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    errors.push(
      "state URL (--state-url / STORE_STATE_URL): not a URL; give redis://[user:password@]host:port[/db] (rediss:// for TLS).",
    );
    return undefined;
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    errors.push(
      `state URL (--state-url / STORE_STATE_URL): the scheme ${url.protocol} is not redis: or rediss:; give redis://[user:password@]host:port[/db].`,
    );
    return undefined;
  }
  return given;
}

/** A per-caller limit: a whole number, 0 or "off" for none. */
function readLimit(env: Env, name: string, fallback: number, errors: string[]): number {
  const given = value(env, name)?.toLowerCase();
  if (given === undefined) return fallback;
  if (given === "off") return 0;
  if (!/^\d+$/.test(given)) {
    errors.push(`${name}: "${given}" must be a whole number (0 or off: no limit).`);
    return fallback;
  }
  return Number(given);
}

/**
 * DNS-rebinding protection: the Host headers accepted (the listen address,
 * the public URL's host, the operator's), and the Origins (this server's
 * own, on localhost names too, and the operator's CORS origins).
 */
function browserChecks(
  cli: HttpCliOptions,
  env: Env,
  at: { shownHost: string; port: number; resourceUrl: string },
): { allowedHosts: string[]; allowedOrigins: string[]; corsOrigins: string[] } {
  const { shownHost, port } = at;
  const publicHost = new URL(at.resourceUrl).host;
  const configuredHosts = cli.allowedHosts?.length ? cli.allowedHosts : list(value(env, "STORE_ALLOWED_HOSTS"));
  const allowedHosts = [
    ...new Set([`${shownHost}:${port}`, publicHost, ...configuredHosts].map((h) => h.toLowerCase())),
  ];
  const corsOrigins = (cli.allowedOrigins?.length ? cli.allowedOrigins : list(value(env, "STORE_ALLOWED_ORIGINS"))).map(
    (o) => o.replace(/\/$/, "").toLowerCase(),
  );
  const ownOrigins = [...allowedHosts, `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`].flatMap((h) => [
    `http://${h}`,
    `https://${h}`,
  ]);
  return { allowedHosts, allowedOrigins: [...new Set([...ownOrigins, ...corsOrigins])], corsOrigins };
}

/** Per caller: an assistant makes a few calls a second (bulk work is one call); these leave room for bursts and parallel agents of one person. */
function callerLimits(env: Env, errors: string[]): HttpConfig["limits"] {
  const perSecond = readLimit(env, "STORE_CALLER_RATE", 50, errors);
  return {
    perSecond,
    burst: readLimit(env, "STORE_CALLER_BURST", perSecond * 2, errors),
    inFlight: readLimit(env, "STORE_CALLER_IN_FLIGHT", 32, errors),
    // Half of one query slot's hour: a caller cannot hold a slot most of the time, however often they renew it.
    querySeconds: readLimit(env, "STORE_CALLER_QUERY_SECONDS", 1800, errors),
  };
}
