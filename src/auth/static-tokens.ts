/**
 * Static bearer tokens (STORE_HTTP_TOKENS) for simple setups. Compared in
 * constant time: both sides are hashed to equal-length digests first, so
 * neither the content nor the length of a configured token leaks through
 * timing.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { StaticToken } from "../http-config.ts";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** The label of the token that matches `presented`, or undefined. Every configured token is compared. */
export function matchStaticToken(tokens: readonly StaticToken[], presented: string): string | undefined {
  const given = digest(presented);
  let label: string | undefined;
  for (const t of tokens) {
    if (timingSafeEqual(digest(t.token), given) && label === undefined) label = t.label;
  }
  return label;
}
