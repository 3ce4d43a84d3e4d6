/**
 * The key a 2026-07-28 question's state and a 2025 client's session id are
 * sealed with (HMAC). Replicas must share it (a retry or an answer may reach
 * another replica), and nobody outside may compute it: so it is derived only
 * from secrets the replicas share — STORE_CONFIRMATION_KEY, the static
 * tokens, the store's secret key — never from what an outsider can know (a
 * state store's URL, an issuer's address). With none of them (OAuth with a
 * pod role or STS pass-through), each process seals with a random key of its
 * own; several replicas then need STORE_CONFIRMATION_KEY, which the start
 * says when a state store shows there are several.
 */
import { createHash, randomBytes } from "node:crypto";

export interface KeySecrets {
  /** STORE_CONFIRMATION_KEY: the operator's own, which decides alone where given. */
  configured?: string;
  tokens: readonly string[];
  storeSecretKey?: string;
}

/** The sealing key, and whether replicas given the same secrets share it. */
export function confirmationKey(secrets: KeySecrets): { key: Uint8Array; shared: boolean } {
  const inputs = secrets.configured
    ? [secrets.configured]
    : [secrets.storeSecretKey, ...secrets.tokens].filter((s): s is string => !!s);
  if (inputs.length === 0) return { key: randomBytes(32), shared: false };
  const hash = createHash("sha256").update("store-mcp-server/confirmation-state/v2");
  for (const secret of inputs) hash.update(`\0${secret}`);
  return { key: hash.digest(), shared: true };
}
