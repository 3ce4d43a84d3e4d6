/**
 * Static bearer tokens (STORE_HTTP_TOKENS) for simple setups. Compared in
 * constant time: both sides are hashed to equal-length digests first, so
 * neither the content nor the length of a configured token leaks through
 * timing.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { StaticToken } from "../config/http-config.ts";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * A matcher for the configured tokens, their digests made once (a team's
 * thousand tokens hashed on every request were a millisecond of CPU each).
 * It returns the label of the token that matches `presented`, or undefined;
 * every configured token is compared.
 */
export function staticTokenMatcher(tokens: readonly StaticToken[]): (presented: string) => string | undefined {
  const known = tokens.map((t) => ({ label: t.label, digest: digest(t.token) }));
  return (presented) => {
    const given = digest(presented);
    let label: string | undefined;
    for (const t of known) {
      if (timingSafeEqual(t.digest, given) && label === undefined) label = t.label;
    }
    return label;
  };
}

/** The label of the token that matches `presented`, or undefined (one-off: hashes every configured token). */
export function matchStaticToken(tokens: readonly StaticToken[], presented: string): string | undefined {
  return staticTokenMatcher(tokens)(presented);
}
