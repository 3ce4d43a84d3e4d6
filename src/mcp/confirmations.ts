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
 *   Stateless, so remote mode asks too. The question goes out with a
 *   `requestState` sealed (HMAC, the SDK's codec) to the question and to
 *   the caller it was asked of, valid ten minutes: an answer counts only
 *   when its retry echoes that state, so an answer given to one caller and
 *   replayed in another caller's request is never taken as theirs.
 */
import { createHash } from "node:crypto";
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  createRequestStateCodec,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type McpServer,
  PROTOCOL_VERSION_META_KEY,
  type RequestStateCodec,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { ConfirmAction, Confirmation } from "../tools/types.ts";

/** The form for each action: its one checkbox's title and description. */
const FORMS: Record<ConfirmAction, { title: string; description: string }> = {
  tags: { title: "Change the tags", description: "Yes, replace the object's tags" },
  versioning: { title: "Change versioning", description: "Yes, change the bucket's versioning" },
  lifecycle: {
    title: "Change lifecycle rules",
    description: "Yes, set these lifecycle rules (expiring objects deletes them)",
  },
  cors: { title: "Change CORS rules", description: "Yes, set these CORS rules" },
  policy: { title: "Change the bucket policy", description: "Yes, change who may access the bucket" },
  delete: { title: "Delete", description: "Yes, delete them" },
  move: { title: "Move", description: "Yes, move them (each source is deleted once its copy is verified)" },
  mirror_delete: { title: "Delete extraneous", description: "Yes, delete what the source no longer has" },
};

/** The schema of one action's form: one checkbox. */
function confirmationForm(action: ConfirmAction) {
  const form = FORMS[action];
  return {
    type: "object" as const,
    properties: { confirm: { type: "boolean" as const, title: form.title, description: form.description } },
    required: ["confirm"],
  };
}

/** Thrown by a 2026-07-28 call's confirmWithUser when the user has not answered yet: the call answers with `result`. */
export class InputNeeded extends Error {
  constructor(readonly result: InputRequiredResult) {
    super("the user's confirmation is needed");
  }
}

/** The input request's key for one question: the action and a digest of its words. */
const keyOf = (action: ConfirmAction, message: string) =>
  `confirm-${action}-${createHash("sha256").update(message).digest("hex").slice(0, 16)}`;

/** What a question's requestState holds: the question's key. */
interface AskedState {
  q: string;
}

export type ConfirmationCodec = RequestStateCodec<AskedState>;

/**
 * The codec that seals a 2026-07-28 question's state to `caller`. Replicas that share `key` accept each other's
 * states (a retry may reach another replica); the SDK verifies an echoed state before any handler runs.
 */
export function confirmationCodec(key: string | Uint8Array, caller: string): ConfirmationCodec {
  return createRequestStateCodec<AskedState>({ key, ttlSeconds: 600, bind: () => `confirm\0${caller}` });
}

/** How one call asks the user; `request` is the SDK's context for the call. */
export type UserConfirmation = (
  request: ServerContext,
) => (action: ConfirmAction, message: string) => Promise<Confirmation>;

/** A confirmWithUser for one server's calls: asks where the client declared elicitation (2025: never in remote mode). */
export function userConfirmation(mcp: McpServer, remote: boolean, codec: ConfirmationCodec): UserConfirmation {
  return (request) => async (action, message) => {
    // A 2026-07-28 request names its protocol and the client's capabilities in its own _meta (the SDK lifts them here).
    const envelope = request.mcpReq.envelope as Record<string, unknown> | undefined;
    if (envelope?.[PROTOCOL_VERSION_META_KEY])
      return askByRetry(
        request,
        codec,
        (envelope[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)?.elicitation !== undefined,
        action,
        message,
      );
    if (remote || !mcp.server.getClientCapabilities()?.elicitation) return "not_asked";
    const answer = await mcp.server.elicitInput({ message, requestedSchema: confirmationForm(action) });
    if (answer.action === "accept") return answer.content?.confirm === true ? "accepted" : "declined";
    return answer.action === "decline" ? "declined" : "cancelled";
  };
}

/**
 * 2026-07-28: the answer if the retry carries one for this question with the state it was asked with (verified by the
 * SDK against this caller), else the question (thrown as InputNeeded).
 */
async function askByRetry(
  request: ServerContext,
  codec: ConfirmationCodec,
  canAsk: boolean,
  action: ConfirmAction,
  message: string,
): Promise<Confirmation> {
  if (!canAsk) return "not_asked";
  const key = keyOf(action, message);
  const answer = inputResponse(request.mcpReq.inputResponses, key);
  const asked = request.mcpReq.requestState<AskedState>();
  if (answer.kind === "elicit" && asked?.q === key) {
    if (answer.action === "accept") return answer.content?.confirm === true ? "accepted" : "declined";
    return answer.action === "decline" ? "declined" : "cancelled";
  }
  const requestState = await codec.mint({ q: key }, request);
  throw new InputNeeded(
    inputRequired({
      inputRequests: { [key]: inputRequired.elicit({ message, requestedSchema: confirmationForm(action) }) },
      requestState,
    }),
  );
}
