/**
 * Asking the user (not the model) to confirm a change, where the client can
 * (elicitation): each action has a form that says what it confirms — a tag
 * change is not titled "Delete" — and only an explicit yes applies. The
 * answer is one of four outcomes a tool puts in its structuredContent
 * (models that see only structuredContent must learn it was declined):
 * accepted, declined (no, or the box left unticked), cancelled (the form
 * dismissed or never answered), not_asked (the client cannot ask, or a
 * 2025-era remote call, where the model's confirm: true stands).
 *
 * Two ways to ask, by the protocol the call came in on:
 * - 2025 (`initialize`): the server sends elicitation/create mid-call and
 *   waits (never in remote mode: the answer could reach another replica).
 * - 2026-07-28: the call answers `input_required` with the form; the client
 *   asks the user and calls again with the answer, and the tool runs again
 *   from the start up to the same question. The form's key carries a digest
 *   of the question, so an answer counts only for the question it was given
 *   to (a delete whose list of keys changed in between is asked again).
 *   Stateless, so remote mode asks too.
 */
import { createHash } from "node:crypto";
import { CLIENT_CAPABILITIES_META_KEY, inputRequired, inputResponse, PROTOCOL_VERSION_META_KEY, type ClientCapabilities, type InputRequiredResult, type McpServer, type ServerContext } from "@modelcontextprotocol/server";
import type { ConfirmAction, Confirmation } from "../tools/types.ts";

/** The form for each action: its one checkbox's title and description. */
const FORMS: Record<ConfirmAction, { title: string; description: string }> = {
  tags: { title: "Change the tags", description: "Yes, replace the object's tags" },
  versioning: { title: "Change versioning", description: "Yes, change the bucket's versioning" },
  lifecycle: { title: "Change lifecycle rules", description: "Yes, set these lifecycle rules (expiring objects deletes them)" },
  cors: { title: "Change CORS rules", description: "Yes, set these CORS rules" },
  policy: { title: "Change the bucket policy", description: "Yes, change who may access the bucket" },
  delete: { title: "Delete", description: "Yes, delete them" },
  move: { title: "Move", description: "Yes, move them (each source is deleted once its copy is verified)" },
  mirror_delete: { title: "Delete extraneous", description: "Yes, delete what the source no longer has" },
};

/** The schema of one action's form: one checkbox. */
function confirmationForm(action: ConfirmAction) {
  const form = FORMS[action];
  return { type: "object" as const, properties: { confirm: { type: "boolean" as const, title: form.title, description: form.description } }, required: ["confirm"] };
}

/** Thrown by a 2026-07-28 call's confirmWithUser when the user has not answered yet: the call answers with `result`. */
export class InputNeeded extends Error {
  constructor(readonly result: InputRequiredResult) {
    super("the user's confirmation is needed");
  }
}

/** The input request's key for one question: the action and a digest of its words. */
const keyOf = (action: ConfirmAction, message: string) => `confirm-${action}-${createHash("sha256").update(message).digest("hex").slice(0, 16)}`;

/** How one call asks the user; `request` is the SDK's context for the call. */
export type UserConfirmation = (request: ServerContext) => (action: ConfirmAction, message: string) => Promise<Confirmation>;

/** A confirmWithUser for one server's calls: asks where the client declared elicitation (2025: never in remote mode). */
export function userConfirmation(mcp: McpServer, remote: boolean): UserConfirmation {
  return (request) => async (action, message) => {
    // A 2026-07-28 request names its protocol and the client's capabilities in its own _meta (the SDK lifts them here).
    const envelope = request.mcpReq.envelope as Record<string, unknown> | undefined;
    if (envelope?.[PROTOCOL_VERSION_META_KEY]) return askByRetry(request, (envelope[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)?.elicitation !== undefined, action, message);
    if (remote || !mcp.server.getClientCapabilities()?.elicitation) return "not_asked";
    const answer = await mcp.server.elicitInput({ message, requestedSchema: confirmationForm(action) });
    if (answer.action === "accept") return answer.content?.confirm === true ? "accepted" : "declined";
    return answer.action === "decline" ? "declined" : "cancelled";
  };
}

/** 2026-07-28: the answer if the retry carries one for this question, else the question (thrown as InputNeeded). */
function askByRetry(request: ServerContext, canAsk: boolean, action: ConfirmAction, message: string): Confirmation {
  if (!canAsk) return "not_asked";
  const key = keyOf(action, message);
  const answer = inputResponse(request.mcpReq.inputResponses, key);
  if (answer.kind === "elicit") {
    if (answer.action === "accept") return answer.content?.confirm === true ? "accepted" : "declined";
    return answer.action === "decline" ? "declined" : "cancelled";
  }
  throw new InputNeeded(inputRequired({ inputRequests: { [key]: inputRequired.elicit({ message, requestedSchema: confirmationForm(action) }) } }));
}
