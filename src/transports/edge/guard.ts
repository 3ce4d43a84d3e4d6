/**
 * The HTTP edge in front of MCP as a list of guards, then dispatch: each
 * guard looks at the request (and what the guards before it found) and
 * either answers it (a refusal, a preflight, a client's answer) or lets it
 * through, leaving what it found for the next; the first answer wins. The
 * order is one readable array in guards.ts, each guard in its own file with
 * its own test (the shape of the MCP SDK's originValidation.ts).
 */
import type { Caller } from "../../auth/index.ts";
import type { RpcMessage } from "../http-eras.ts";

/** One request to /mcp, as the guards find it out. */
export interface EdgeRequest {
  readonly req: Request;
  /** CORS headers for this request's Origin (none unless it is a configured one): on every answer. */
  cors: Record<string, string>;
  /** Who calls, once authenticated. */
  caller?: Caller;
  /** The parsed body, and its one JSON-RPC message. */
  body?: unknown;
  message?: RpcMessage | undefined;
  /** For the access log: what the request was (a tool call's name…) and who made it. */
  note(what: string, caller?: string): void;
  /** The caller's in-flight slot, given back when the answer is written. */
  hold(release: () => void): void;
}

export type Guard = (edge: EdgeRequest) => Response | undefined | Promise<Response | undefined>;

/** The first guard's answer, or undefined when every guard let the request through. */
export async function firstAnswer(guards: readonly Guard[], edge: EdgeRequest): Promise<Response | undefined> {
  for (const guard of guards) {
    const answer = await guard(edge);
    if (answer) return answer;
  }
  return undefined;
}
