/** A caller over their rate or their requests in flight is answered 429 before any work; else their slot is held. */
import { telemetry } from "../../runtime/telemetry.ts";
import { rpcError } from "../http-replies.ts";
import type { Limiter } from "../shared-limits.ts";
import type { Guard } from "./guard.ts";

export function limitGuard(limits: Limiter): Guard {
  return async (edge) => {
    const caller = edge.caller!;
    const admitted = await limits.admit(caller.id);
    if (admitted.ok) {
      edge.hold(admitted.release);
      return undefined;
    }
    edge.note("rate limited", caller.id);
    telemetry().refused("rate_limit");
    return rpcError(
      429,
      -32000,
      `Too many requests: this caller is over its limit (${admitted.reason}). Retry after ${admitted.retryAfterS} s.`,
      { ...edge.cors, "retry-after": String(admitted.retryAfterS) },
    );
  };
}
