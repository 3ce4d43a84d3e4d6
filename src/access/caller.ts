/** The caller as authentication hands it to the rest (auth/ makes it; access/ and the transports use it). */
import type { Scope } from "../config/oauth-config.ts";

/** Who is calling, as far as authorization goes: never the token itself. */
export interface Caller {
  /** The key of everything kept per caller (auth/caller-id.ts): label:NAME, sub:ID, client_id:ID, or "anonymous". */
  id: string;
  /** What this caller may do. */
  scopes: ReadonlySet<Scope>;
  /** What a per-caller policy matches on (access/): a static token's label; a JWT's sub, claims and scopes as named in it. */
  label?: string;
  sub?: string;
  claims?: Record<string, unknown>;
  tokenScopes?: readonly string[];
  /** The caller's JWT itself, only for identity pass-through's STS exchange (access/pass-through.ts): never logged or echoed. */
  webIdentityToken?: string;
}
