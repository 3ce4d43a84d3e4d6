/**
 * Turns an HTTP request's Authorization header into a caller with
 * permissions. Static tokens and OAuth may both be configured: a static
 * token is tried first, then the JWT check. With neither (a loopback-only
 * server), every caller is anonymous with every permission the server's own
 * configuration allows.
 */
import type { HttpConfig } from "../config/http-config.ts";
import { SCOPES } from "../config/oauth-config.ts";
import { callerId } from "./caller-id.ts";
import { jwtVerifier } from "./jwt.ts";
import { staticTokenMatcher } from "./static-tokens.ts";
import type { Authenticator, AuthResult } from "./types.ts";

export type { Authenticator, AuthResult, Caller } from "./types.ts";

const ALL = new Set(SCOPES);

export function createAuthenticator(config: HttpConfig): Authenticator {
  const verifyJwt = config.oauth ? jwtVerifier(config.oauth) : undefined;
  const required = config.tokens.length > 0 || verifyJwt !== undefined;
  const matchStaticToken = staticTokenMatcher(config.tokens);
  return {
    required,
    async authenticate(authorization): Promise<AuthResult> {
      if (!required) return { ok: true, caller: { id: "anonymous", scopes: ALL } };
      const match = authorization?.match(/^Bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i);
      if (!authorization)
        return { ok: false, description: "this server needs an access token (Authorization: Bearer …)" };
      if (!match)
        return { ok: false, error: "invalid_request", description: "the Authorization header is not a Bearer token" };
      const token = match[1]!;
      const label = matchStaticToken(token);
      if (label !== undefined) return { ok: true, caller: { id: callerId("label", label), label, scopes: ALL } };
      if (verifyJwt) return verifyJwt(token);
      return { ok: false, error: "invalid_token", description: "the token is not one this server accepts" };
    },
  };
}
