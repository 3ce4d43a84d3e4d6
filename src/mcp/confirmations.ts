/**
 * Asking the user (not the model) to confirm a change, where the client can
 * (elicitation): each action has a form that says what it confirms — a tag
 * change is not titled "Delete" — and only an explicit yes applies. The
 * answer is one of four outcomes a tool puts in its structuredContent
 * (models that see only structuredContent must learn it was declined):
 * accepted, declined (no, or the box left unticked), cancelled (the form
 * dismissed or never answered), not_asked (the client declared no
 * elicitation, so the model's confirm: true stands).
 *
 * Three ways to ask, by the protocol and transport the call came in on:
 * - 2025 (`initialize`) over stdio: the server sends elicitation/create
 *   mid-call and waits.
 * - 2025 over HTTP (remote mode): the transport says whether the client
 *   declared elicitation and gives the call a LegacyAsk (on the call's own
 *   stream; the answer may reach another replica and is relayed: see
 *   transports/legacy-questions.ts). A question that can no longer reach the
 *   user (a job's, after its call was answered) changes nothing: the call
 *   fails with NotConfirmed and says to call again.
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
import { ActionableError } from "../runtime/errors.ts";
import type { ConfirmAction, Confirmation } from "../tool-kit/types.ts";

/** An elicitation's outcome as a 2025 HTTP call sees it: the client's result, no answer in time, or no stream to ask on. */
export type LegacyAnswer =
  | { outcome: "answered"; result: { action?: string; content?: Record<string, unknown> } }
  | { outcome: "unanswered" }
  | { outcome: "unreachable" };

/** How a 2025 HTTP call asks its user, handed to the call by the transport (absent: the client declared no elicitation). */
export interface LegacyAsk {
  ask(params: Record<string, unknown>, signal: AbortSignal): Promise<LegacyAnswer>;
}

/** Where the HTTP transport puts a call's LegacyAsk: the request's auth info `extra`, the SDK's per-request channel. */
export const LEGACY_ASK = "store-mcp-server/legacy-ask";

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
  retention: {
    title: "Protect until a date",
    description: "Yes, keep it from being deleted or overwritten until then (an administrator can still lift it)",
  },
  compliance: {
    title: "Lock for compliance: cannot be undone",
    description:
      "Yes, I understand that nobody, not even the account's administrators, can delete or change it, or shorten the lock, until that date",
  },
  retention_shorten: {
    title: "Lift retention",
    description: "Yes, shorten or remove the retention, so it can be deleted or overwritten sooner",
  },
  legal_hold: {
    title: "Change the legal hold",
    description: "Yes, change the legal hold (while on, it cannot be deleted)",
  },
  default_retention: {
    title: "Change default retention",
    description: "Yes, change how long every new object in the bucket is kept from deletion",
  },
  restore: { title: "Restore archived objects", description: "Yes, restore them (the store bills each restore)" },
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

/** How one call asks the user; `request` is the SDK's context for the call, `signal` its work's (cancel, shutdown). */
export type UserConfirmation = (
  request: ServerContext,
  signal: AbortSignal,
) => (action: ConfirmAction, message: string) => Promise<Confirmation>;

/** A confirmWithUser for one server's calls: asks where the client declared elicitation. */
export function userConfirmation(mcp: McpServer, remote: boolean, codec: ConfirmationCodec): UserConfirmation {
  return (request, signal) => async (action, message) => {
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
    const legacy = request.http?.authInfo?.extra?.[LEGACY_ASK] as LegacyAsk | undefined;
    if (legacy) return askOnStream(legacy, signal, action, message);
    if (remote || !mcp.server.getClientCapabilities()?.elicitation) return "not_asked";
    return outcomeOf(await mcp.server.elicitInput({ message, requestedSchema: confirmationForm(action) }));
  };
}

/** The outcome of an elicitation result: only an accepted form with the box ticked is a yes. */
const outcomeOf = (answer: { action?: string; content?: Record<string, unknown> }): Confirmation =>
  answer.action === "accept"
    ? answer.content?.confirm === true
      ? "accepted"
      : "declined"
    : answer.action === "decline"
      ? "declined"
      : "cancelled";

/** 2025 over HTTP: the question on the call's stream; no answer in time is cancelled; no stream left changes nothing. */
async function askOnStream(legacy: LegacyAsk, signal: AbortSignal, action: ConfirmAction, message: string) {
  const answer = await legacy.ask({ mode: "form", message, requestedSchema: confirmationForm(action) }, signal);
  if (answer.outcome === "answered") return outcomeOf(answer.result);
  if (answer.outcome === "unanswered") return "cancelled";
  throw new ActionableError({
    resource: "confirmation",
    code: "NotConfirmed",
    message: `A question for the user ("${message}") came after this call was answered (it went on as a job), and a job cannot ask over HTTP. Nothing was changed past that point.`,
    hint: "call the tool again with the same arguments: it asks before it changes anything.",
  });
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
  if (answer.kind === "elicit" && asked?.q === key) return outcomeOf(answer);
  const requestState = await codec.mint({ q: key }, request);
  throw new InputNeeded(
    inputRequired({
      inputRequests: { [key]: inputRequired.elicit({ message, requestedSchema: confirmationForm(action) }) },
      requestState,
    }),
  );
}
