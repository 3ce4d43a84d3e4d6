import type { Caller } from "../access/caller.ts";

export type { Caller } from "../access/caller.ts";

export type AuthResult =
  | { ok: true; caller: Caller }
  /** 401: no token, or one that is not valid here. `error` goes into WWW-Authenticate (RFC 6750). */
  | { ok: false; error?: "invalid_token" | "invalid_request"; description: string };

export interface Authenticator {
  /** Turns a request's Authorization header into a caller, or says why not. */
  authenticate(authorization: string | null): Promise<AuthResult>;
  /** True when calls need a token (static tokens or OAuth configured). */
  required: boolean;
}
