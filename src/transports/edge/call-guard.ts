/** A tools/call outside the caller's scopes (403) or policy (an error result), refused before any MCP server sees it. */
import { telemetry } from "../../runtime/telemetry.ts";
import { type CallRules, type Challenge, callRefusal } from "../http-call-refusal.ts";
import type { RpcMessage } from "../http-eras.ts";
import type { Guard } from "./guard.ts";

export function callGuard(rules: CallRules, challenge: Challenge): Guard {
  return (edge) => {
    const { message } = edge;
    if (message?.method !== "tools/call" || typeof message.params?.name !== "string") return undefined;
    const refusal = callRefusal(
      rules,
      message as RpcMessage & { params: { name: string } },
      edge.caller!,
      edge.cors,
      challenge,
    );
    if (refusal) telemetry().refused("policy");
    return refusal;
  };
}
