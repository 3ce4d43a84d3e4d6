/**
 * OAuth 2.1 resource server (MCP authorization spec): access tokens are JWTs
 * checked against the issuer's published keys (JWKS, via jose), their `iss`,
 * `aud` (this server's resource URL, RFC 8707), expiry and not-before with
 * a small clock skew. The keys' address comes from the issuer's metadata
 * unless configured; jose caches the key set and refetches it when a token
 * names an unknown key (key rotation).
 *
 * Unauthenticated traffic must not become traffic to the issuer: a token
 * that is not even a well-formed JWT, or names an algorithm outside the
 * allowlist (none, HS256…) or a key of its own (jwk, jku, x5u), is refused
 * before any key is looked up. While the issuer's metadata or keys cannot
 * be fetched, the failure is remembered (with backoff) instead of fetched
 * again for every request — but only a failed fetch counts: an error about
 * one token is that request's own 401, so junk tokens cannot make every
 * valid one wait out a backoff.
 */
import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  type JWTPayload,
  type JWTVerifyGetKey,
  errors as joseErrors,
  jwtVerify,
} from "jose";
import { type OAuthConfig, SCOPES, type Scope } from "../config/oauth-config.ts";
import { callerId } from "./caller-id.ts";
import type { AuthResult } from "./types.ts";

/** Tolerated difference between our clock and the issuer's, in seconds. */
export const CLOCK_SKEW_S = 30;

/** The issuer's jwks_uri from its OpenID or OAuth authorization server metadata. */
async function discoverJwks(issuer: string): Promise<URL> {
  const base = issuer.replace(/\/$/, "");
  const candidates = [
    `${base}/.well-known/openid-configuration`,
    `${new URL(issuer).origin}/.well-known/oauth-authorization-server${new URL(issuer).pathname.replace(/\/$/, "")}`,
  ];
  for (const url of candidates) {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
    if (!res?.ok) continue;
    const meta = (await res.json().catch(() => ({}))) as { jwks_uri?: string };
    if (meta.jwks_uri) return new URL(meta.jwks_uri);
  }
  throw new Error(`the OAuth issuer ${issuer} publishes no jwks_uri in its metadata; set --oauth-jwks-url`);
}

/** The permissions a token's `scope` (space-separated) or `scp` (list) grants. */
export function scopesOf(payload: JWTPayload, names: Record<Scope, string>): Set<Scope> {
  const granted = new Set(tokenScopes(payload));
  return new Set(SCOPES.filter((s) => granted.has(names[s])));
}

/** The scopes a token carries, as it names them (`scope`, space-separated, or `scp`, a list). */
function tokenScopes(payload: JWTPayload): string[] {
  const raw = payload.scope ?? payload.scp;
  return typeof raw === "string" ? raw.split(" ").filter(Boolean) : Array.isArray(raw) ? raw.map(String) : [];
}

/** RFC 9068 access tokens say `at+jwt`; plain `JWT` and no `typ` are what most issuers send. Anything else (an ID token, a logout token…) is not an access token. */
const ACCESS_TOKEN_TYPES = new Set(["at+jwt", "application/at+jwt", "jwt"]);

/** How long a failed metadata or key fetch is remembered: doubling from the first to the last. */
export const ISSUER_BACKOFF_MS = { first: 2_000, max: 60_000 };

class IssuerUnavailable extends Error {}

/**
 * Whether a key lookup failed because the issuer's metadata or keys could
 * not be fetched or read (an outage), rather than because of the token: a
 * network error or our discovery's own Error, jose's timeout, a key set that
 * is not one, or a non-200 / non-JSON answer (a plain JOSEError). Every
 * other jose error (no key for this `kid`/`alg`, an unsupported `alg`…) is
 * about the token.
 */
function isFetchFailure(err: unknown): boolean {
  if (!(err instanceof joseErrors.JOSEError)) return true;
  return (
    err instanceof joseErrors.JWKSTimeout ||
    err instanceof joseErrors.JWKSInvalid ||
    err.constructor === joseErrors.JOSEError
  );
}

/**
 * The issuer's keys, with failures remembered: after a failed fetch, every
 * request within the backoff is refused at once (503-like) without a fetch.
 */
function keysWithBackoff(config: OAuthConfig, now: () => number = Date.now): JWTVerifyGetKey {
  // One discovery at a time, shared by every request waiting for it (jose shares its key fetches the same way).
  let keys: Promise<JWTVerifyGetKey> | undefined;
  let failedUntil = 0;
  let backoff = 0;
  let lastProblem = "";
  return async (header, token) => {
    if (now() < failedUntil) throw new IssuerUnavailable(lastProblem);
    const pending = (keys ??= (
      config.jwksUrl ? Promise.resolve(new URL(config.jwksUrl)) : discoverJwks(config.issuer)
    ).then((url) => createRemoteJWKSet(url)));
    try {
      const key = await (await pending)(header, token);
      backoff = 0;
      return key;
    } catch (err) {
      // A key set that answered but has no key for this token is an answer about the token, not an outage.
      if (!isFetchFailure(err)) throw err;
      if (keys === pending) keys = undefined; // discovery failed: try it again after the backoff
      if (now() >= failedUntil) {
        // Counted once per outage window, however many requests shared the failed fetch.
        backoff = Math.min(backoff ? backoff * 2 : ISSUER_BACKOFF_MS.first, ISSUER_BACKOFF_MS.max);
        failedUntil = now() + backoff;
        lastProblem = String((err as Error)?.message ?? err).slice(0, 160);
      }
      throw new IssuerUnavailable(lastProblem);
    }
  };
}

/** Header parameters that bring a key (or where to fetch one) with the token: never trusted, since the issuer's keys are known. */
const KEY_CARRYING_HEADERS = ["jwk", "jku", "x5u"] as const;

/** Why a token's shape rules it out before any key is looked up, or undefined. */
function shapeProblem(token: string, requireExp: boolean, algorithms: readonly string[]): string | undefined {
  let header: ReturnType<typeof decodeProtectedHeader>;
  let payload: JWTPayload;
  try {
    header = decodeProtectedHeader(token);
    payload = decodeJwt(token);
  } catch {
    return "the access token is not a valid JWT";
  }
  const { typ, alg, kid } = header;
  if (typeof alg !== "string" || !algorithms.includes(alg))
    return `the access token's signing algorithm (alg) ${String(alg)
      .replace(/[^A-Za-z0-9_-]/g, "?")
      .slice(0, 20)} is not one this server accepts (${algorithms.join(", ")})`;
  const carried = KEY_CARRYING_HEADERS.find((name) => header[name] !== undefined);
  if (carried)
    return `the access token carries its own key (a ${carried} header); this server checks tokens only against the issuer's published keys`;
  if (kid !== undefined && typeof kid !== "string") return `the access token's key id (kid) is not a string`;
  if (typ !== undefined && (typeof typ !== "string" || !ACCESS_TOKEN_TYPES.has(typ.toLowerCase())))
    return `the token's type ("typ") is not an access token's (at+jwt or JWT)`;
  if (requireExp && typeof payload.exp !== "number")
    return `the access token has no expiry ("exp" claim); this server accepts only tokens that expire`;
  return undefined;
}

export function jwtVerifier(config: OAuthConfig): (token: string) => Promise<AuthResult> {
  const keys = keysWithBackoff(config);
  const requireExp = !config.allowTokensWithoutExpiry;
  return async (token) => {
    const problem = shapeProblem(token, requireExp, config.algorithms);
    if (problem) return { ok: false, error: "invalid_token", description: problem };
    try {
      const { payload } = await jwtVerify(token, keys, {
        algorithms: config.algorithms,
        issuer: config.issuer,
        audience: config.audience,
        clockTolerance: CLOCK_SKEW_S,
        ...(requireExp ? { requiredClaims: ["exp"] } : {}),
      });
      const sub = typeof payload.sub === "string" && payload.sub !== "" ? payload.sub : undefined;
      const client = typeof payload.client_id === "string" && payload.client_id !== "" ? payload.client_id : undefined;
      // Jobs, tasks, limits and confirmations belong to this id: a token that names nobody would share them.
      if (!sub && !client)
        return {
          ok: false,
          error: "invalid_token",
          description: 'the access token names no subject ("sub" claim) or client ("client_id"), so it is nobody\'s',
        };
      return {
        ok: true,
        caller: {
          id: sub ? callerId("sub", sub) : callerId("client_id", client!),
          ...(sub ? { sub } : {}),
          claims: payload,
          tokenScopes: tokenScopes(payload),
          webIdentityToken: token,
          scopes: scopesOf(payload, config.scopeNames),
        },
      };
    } catch (err) {
      return { ok: false, error: "invalid_token", description: describeJwtError(err) };
    }
  };
}

/** What was wrong with a token, without echoing it. */
function describeJwtError(err: unknown): string {
  if (err instanceof IssuerUnavailable)
    return "the access token cannot be checked now: the issuer's keys are unreachable; retry later";
  if (err instanceof joseErrors.JWTExpired) return "the access token has expired";
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return `the access token's "${err.claim}" claim is not valid for this server`;
  if (err instanceof joseErrors.JWSSignatureVerificationFailed || err instanceof joseErrors.JWKSNoMatchingKey)
    return "the access token's signature does not verify against the issuer's keys";
  if (err instanceof joseErrors.JWTInvalid || err instanceof joseErrors.JWSInvalid)
    return "the access token is not a valid JWT";
  if (err instanceof joseErrors.JOSENotSupported || err instanceof joseErrors.JOSEAlgNotAllowed)
    return "the access token's algorithm or key type is not supported here";
  return `the access token could not be checked (${(err as Error)?.message?.slice(0, 120) ?? "unknown error"})`;
}
