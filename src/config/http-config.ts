/**
 * The remote mode's settings (--transport http): where to listen, who may
 * call, from which hosts and origins. Validated with the rest of the
 * configuration so a user sees every problem at once; secrets (the static
 * tokens) come only from the environment, never from argv.
 */

import { maskUrlValue } from "../runtime/redact.ts";
import { type Env, envValue, readBoolean, readPositiveInt, splitList } from "./env-values.ts";

export type Transport = "stdio" | "http";

/** What a caller may do: s3:read, s3:write, s3:delete by default (names configurable). */
export type Scope = "read" | "write" | "delete";
export const SCOPES: readonly Scope[] = ["read", "write", "delete"];

export interface StaticToken {
  /** Shown in access logs instead of the token. */
  label: string;
  token: string;
}

export interface OAuthConfig {
  issuer: string;
  /** The `aud` an access token must carry: this server's resource URL unless set (RFC 8707). */
  audience: string;
  /** Where the issuer's signing keys are; discovered from its metadata when unset. */
  jwksUrl: string | undefined;
  /** The scope names (in tokens and in the protected resource metadata) for each permission. */
  scopeNames: Record<Scope, string>;
  /** Accept JWTs without `exp` (they would never expire): only by an explicit STORE_OAUTH_ALLOW_NO_EXPIRY=true. */
  allowTokensWithoutExpiry: boolean;
  /** The signing algorithms a token may name (`alg`): asymmetric ones only (STORE_OAUTH_ALGORITHMS narrows them). */
  algorithms: string[];
}

/**
 * Issuers sign access tokens with a private key and publish the public one.
 * A symmetric `alg` (HS256…) or `none` is never right for a resource server
 * that only holds public keys, so those are not even offered as a setting.
 */
export const ASYMMETRIC_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;

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

export interface HttpCliOptions {
  transport?: string;
  listen?: string;
  resourceUrl?: string;
  oauthIssuer?: string;
  oauthAudience?: string;
  oauthJwksUrl?: string;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  stateUrl?: string;
}

export const DEFAULT_LISTEN = "127.0.0.1:8787";
const DEFAULT_SCOPE_NAMES: Record<Scope, string> = { read: "s3:read", write: "s3:write", delete: "s3:delete" };

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

function checkUrl(raw: string, what: string, errors: string[]): string | undefined {
  try {
    const url = new URL(raw);
    if (url.protocol === "http:" || url.protocol === "https:") return url.toString();
  } catch {
    // reported below
  }
  // Echoed without userinfo, parsed or not (user:secret@ is a credential).
  errors.push(`${what}: "${maskUrlValue(raw)}" is not an http(s) URL.`);
  return undefined;
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

  const issuerRaw = cli.oauthIssuer ?? value(env, "STORE_OAUTH_ISSUER");
  let oauth: OAuthConfig | undefined;
  if (issuerRaw) {
    const issuer = checkUrl(issuerRaw, "OAuth issuer (--oauth-issuer / STORE_OAUTH_ISSUER)", errors);
    const jwksRaw = cli.oauthJwksUrl ?? value(env, "STORE_OAUTH_JWKS_URL");
    const jwksUrl = jwksRaw
      ? checkUrl(jwksRaw, "JWKS URL (--oauth-jwks-url / STORE_OAUTH_JWKS_URL)", errors)
      : undefined;
    const scopeNames = { ...DEFAULT_SCOPE_NAMES };
    for (const scope of SCOPES)
      scopeNames[scope] = value(env, `STORE_OAUTH_SCOPE_${scope.toUpperCase()}`) ?? scopeNames[scope];
    // The issuer is used as written (jose compares `iss` exactly); only the URL check normalises.
    const allowTokensWithoutExpiry = readBoolean(env, "STORE_OAUTH_ALLOW_NO_EXPIRY", false, errors);
    const algorithms = list(value(env, "STORE_OAUTH_ALGORITHMS"));
    for (const alg of algorithms.filter((a) => !(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(a))) {
      errors.push(
        `STORE_OAUTH_ALGORITHMS: "${alg}" is not an asymmetric signing algorithm this server accepts (${ASYMMETRIC_ALGORITHMS.join(", ")}).`,
      );
    }
    oauth = issuer
      ? {
          issuer: issuerRaw,
          audience: cli.oauthAudience ?? value(env, "STORE_OAUTH_AUDIENCE") ?? resourceUrl,
          jwksUrl,
          scopeNames,
          allowTokensWithoutExpiry,
          algorithms: algorithms.length ? algorithms : [...ASYMMETRIC_ALGORITHMS],
        }
      : undefined;
  } else if (
    cli.oauthAudience ||
    cli.oauthJwksUrl ||
    value(env, "STORE_OAUTH_AUDIENCE") ||
    value(env, "STORE_OAUTH_JWKS_URL")
  ) {
    errors.push(
      "OAuth: an audience or JWKS URL was given without an issuer; set --oauth-issuer / STORE_OAUTH_ISSUER too.",
    );
  }

  if (!isLoopback(host) && tokens.length === 0 && !oauth) {
    errors.push(
      `listen: ${shownHost}:${port} is reachable from other machines, and no authentication is configured; set STORE_HTTP_TOKENS (static bearer tokens) or --oauth-issuer (OAuth), or listen on 127.0.0.1.`,
    );
  }

  // DNS-rebinding protection: the listen address, localhost names and the public URL's host.
  const publicHost = new URL(resourceUrl).host;
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
  const shutdownGraceMs = readPositiveInt(env, "STORE_SHUTDOWN_GRACE_MS", 25_000, errors);
  const shutdownUnreadyMs = readLimit(env, "STORE_SHUTDOWN_UNREADY_MS", 0, errors);

  // An assistant makes a few calls a second (bulk work is one call); these leave room for bursts and parallel agents of one person.
  const perSecond = readLimit(env, "STORE_CALLER_RATE", 50, errors);
  const limits = {
    perSecond,
    burst: readLimit(env, "STORE_CALLER_BURST", perSecond * 2, errors),
    inFlight: readLimit(env, "STORE_CALLER_IN_FLIGHT", 32, errors),
    // Half of one query slot's hour: a caller cannot hold a slot most of the time, however often they renew it.
    querySeconds: readLimit(env, "STORE_CALLER_QUERY_SECONDS", 1800, errors),
  };
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
    allowedOrigins: [...new Set([...ownOrigins, ...corsOrigins])],
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
