/**
 * OAuth 2.1 resource server (MCP authorization spec): access tokens are JWTs
 * checked against the issuer's published keys (JWKS, via jose), their `iss`,
 * `aud` (this server's resource URL, RFC 8707), expiry and not-before with
 * a small clock skew. The keys' address comes from the issuer's metadata
 * unless configured; jose caches the key set and refetches it when a token
 * names an unknown key (key rotation).
 */
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
import { SCOPES, type OAuthConfig, type Scope } from "../http-config.ts";
import type { AuthResult } from "./types.ts";

/** Tolerated difference between our clock and the issuer's, in seconds. */
export const CLOCK_SKEW_S = 30;

/** The issuer's jwks_uri from its OpenID or OAuth authorization server metadata. */
async function discoverJwks(issuer: string): Promise<URL> {
  const base = issuer.replace(/\/$/, "");
  const candidates = [`${base}/.well-known/openid-configuration`, `${new URL(issuer).origin}/.well-known/oauth-authorization-server${new URL(issuer).pathname.replace(/\/$/, "")}`];
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
  const raw = payload.scope ?? payload.scp;
  const granted = new Set(typeof raw === "string" ? raw.split(" ") : Array.isArray(raw) ? raw.map(String) : []);
  return new Set(SCOPES.filter((s) => granted.has(names[s])));
}

export function jwtVerifier(config: OAuthConfig): (token: string) => Promise<AuthResult> {
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  const keySet = async () => (keys ??= createRemoteJWKSet(config.jwksUrl ? new URL(config.jwksUrl) : await discoverJwks(config.issuer)));
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, await keySet(), { issuer: config.issuer, audience: config.audience, clockTolerance: CLOCK_SKEW_S });
      return { ok: true, caller: { id: typeof payload.sub === "string" ? payload.sub : (payload.client_id as string | undefined) ?? "unknown", scopes: scopesOf(payload, config.scopeNames) } };
    } catch (err) {
      return { ok: false, error: "invalid_token", description: describeJwtError(err) };
    }
  };
}

/** What was wrong with a token, without echoing it. */
function describeJwtError(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return "the access token has expired";
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `the access token's "${err.claim}" claim is not valid for this server`;
  if (err instanceof joseErrors.JWSSignatureVerificationFailed || err instanceof joseErrors.JWKSNoMatchingKey) return "the access token's signature does not verify against the issuer's keys";
  if (err instanceof joseErrors.JWTInvalid || err instanceof joseErrors.JWSInvalid || err instanceof joseErrors.JOSENotSupported) return "the access token is not a valid JWT";
  return `the access token could not be checked (${(err as Error)?.message?.slice(0, 120) ?? "unknown error"})`;
}
