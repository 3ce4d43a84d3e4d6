/** Who calls: a request whose token does not authenticate is answered 401 with the challenge (RFC 6750, RFC 9728). */
import type { Authenticator } from "../../auth/index.ts";
import { rpcError } from "../http-replies.ts";
import type { Guard } from "./guard.ts";

export function authGuard(auth: Authenticator, challenge: (extra?: string) => string): Guard {
  return async (edge) => {
    const who = await auth.authenticate(edge.req.headers.get("authorization"));
    if (who.ok) {
      edge.caller = who.caller;
      return undefined;
    }
    // A quoted-string may not carry quotes or control characters (RFC 9110).
    const error = who.error
      ? `, error="${who.error}", error_description="${who.description.replace(/["\\\x00-\x1f]/g, "'")}"`
      : "";
    return rpcError(401, -32001, `Unauthorized: ${who.description}.`, {
      ...edge.cors,
      "www-authenticate": challenge(error),
    });
  };
}
