/**
 * The remote mode's OAuth settings: the issuer whose access tokens are
 * accepted, the audience they must name, where its keys are, the scope
 * names and signing algorithms. Checked with the rest of the configuration
 * (http-config.ts), every problem reported at once.
 */

import { checkUrl } from "./endpoint-url.ts";
import { type Env, envValue, readBoolean, splitList } from "./env-values.ts";

/** What a caller may do: s3:read, s3:write, s3:delete by default (names configurable). */
export type Scope = "read" | "write" | "delete";
export const SCOPES: readonly Scope[] = ["read", "write", "delete"];

export interface OAuthCliOptions {
  oauthIssuer?: string;
  oauthAudience?: string;
  oauthJwksUrl?: string;
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

const DEFAULT_SCOPE_NAMES: Record<Scope, string> = { read: "s3:read", write: "s3:write", delete: "s3:delete" };

const value = (env: Env, name: string) => envValue(env, name)?.trim();

/** The OAuth settings when an issuer is given (undefined, and an error for an audience or JWKS URL without one, when not). */
export function resolveOAuth(
  cli: OAuthCliOptions,
  env: Env,
  resourceUrl: string,
  errors: string[],
): OAuthConfig | undefined {
  const issuerRaw = cli.oauthIssuer ?? value(env, "STORE_OAUTH_ISSUER");
  if (!issuerRaw) {
    if (
      cli.oauthAudience ||
      cli.oauthJwksUrl ||
      value(env, "STORE_OAUTH_AUDIENCE") ||
      value(env, "STORE_OAUTH_JWKS_URL")
    )
      errors.push(
        "OAuth: an audience or JWKS URL was given without an issuer; set --oauth-issuer / STORE_OAUTH_ISSUER too.",
      );
    return undefined;
  }
  const issuer = checkUrl(issuerRaw, "OAuth issuer (--oauth-issuer / STORE_OAUTH_ISSUER)", errors);
  const jwksRaw = cli.oauthJwksUrl ?? value(env, "STORE_OAUTH_JWKS_URL");
  const jwksUrl = jwksRaw ? checkUrl(jwksRaw, "JWKS URL (--oauth-jwks-url / STORE_OAUTH_JWKS_URL)", errors) : undefined;
  const scopeNames = { ...DEFAULT_SCOPE_NAMES };
  for (const scope of SCOPES)
    scopeNames[scope] = value(env, `STORE_OAUTH_SCOPE_${scope.toUpperCase()}`) ?? scopeNames[scope];
  const allowTokensWithoutExpiry = readBoolean(env, "STORE_OAUTH_ALLOW_NO_EXPIRY", false, errors);
  const algorithms = splitList(value(env, "STORE_OAUTH_ALGORITHMS"), ",");
  for (const alg of algorithms.filter((a) => !(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(a))) {
    errors.push(
      `STORE_OAUTH_ALGORITHMS: "${alg}" is not an asymmetric signing algorithm this server accepts (${ASYMMETRIC_ALGORITHMS.join(", ")}).`,
    );
  }
  if (!issuer) return undefined;
  return {
    // The issuer is used as written (jose compares `iss` exactly); only the URL check normalises.
    issuer: issuerRaw,
    audience: cli.oauthAudience ?? value(env, "STORE_OAUTH_AUDIENCE") ?? resourceUrl,
    jwksUrl,
    scopeNames,
    allowTokensWithoutExpiry,
    algorithms: algorithms.length ? algorithms : [...ASYMMETRIC_ALGORITHMS],
  };
}
