/**
 * A tools/call refused before any MCP server sees it: one that needs a
 * scope the caller's token lacks (403, the scope named in the challenge, as
 * RFC 6750 says), or a tool the caller's policy does not grant (answered as
 * the SDK answers an unknown tool, an error result, with the reason). Each
 * is told to the audit log.
 */
import type { Caller } from "../auth/index.ts";
import type { Scope } from "../config/oauth-config.ts";
import type { RpcMessage } from "./http-eras.ts";
import { json, rpcError } from "./http-replies.ts";

export interface CallRules {
  /** The permission a tools/call needs that this caller lacks, if any (policy.ts decides). */
  missingScope(name: string, args: Record<string, unknown>, caller: Caller): Scope | undefined;
  /** Why the per-caller policy gives this caller no such tool (it is not in their tools/list), if it does not. */
  policyRefusal?(name: string, caller: Caller): string | undefined;
  /** Told of a tools/call refused here, before any MCP server saw it (for the audit log). */
  refusedCall?(caller: Caller, name: string, args: Record<string, unknown>, code: string, id: RpcMessage["id"]): void;
}

export interface Challenge {
  /** A scope's name as the authorization server spells it. */
  scopeName(scope: Scope): string;
  /** The WWW-Authenticate value, with `extra` parameters. */
  header(extra?: string): string;
}

/** The answer refusing `message` (a tools/call naming a tool), or undefined when it may go on. */
export function callRefusal(
  rules: CallRules,
  message: RpcMessage & { params: { name: string } },
  caller: Caller,
  corsHeaders: Record<string, string>,
  challenge: Challenge,
): Response | undefined {
  const { name } = message.params;
  const args = (message.params.arguments ?? {}) as Record<string, unknown>;
  const missing = rules.missingScope(name, args, caller);
  if (missing) {
    rules.refusedCall?.(caller, name, args, "InsufficientScope", message.id);
    const scope = challenge.scopeName(missing);
    const error = `, error="insufficient_scope", scope="${scope}", error_description="this call needs the ${scope} scope"`;
    return rpcError(
      403,
      -32003,
      `Forbidden: ${name} with these arguments needs the ${scope} scope.`,
      { ...corsHeaders, "www-authenticate": challenge.header(error) },
      message.id,
    );
  }
  const refused = rules.policyRefusal?.(name, caller);
  if (!refused) return undefined;
  rules.refusedCall?.(caller, name, args, "PolicyDenied", message.id);
  return json(
    200,
    { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: refused }], isError: true } },
    corsHeaders,
  );
}
