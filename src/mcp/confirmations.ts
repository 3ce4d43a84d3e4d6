/**
 * Asking the user (not the model) to confirm a change, where the client can
 * (elicitation): each action has a form that says what it confirms — a tag
 * change is not titled "Delete" — and only an explicit yes applies. The
 * answer is one of four outcomes a tool puts in its structuredContent
 * (models that see only structuredContent must learn it was declined):
 * accepted, declined (no, or the box left unticked), cancelled (the form
 * dismissed or never answered), not_asked (the client cannot ask, or remote
 * mode, where the model's confirm: true stands).
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
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

/** A confirmWithUser for one server: asks where the client declared elicitation, never in remote mode. */
export function userConfirmation(mcp: McpServer, remote: boolean): (action: ConfirmAction, message: string) => Promise<Confirmation> {
  return async (action, message) => {
    if (remote || !mcp.server.getClientCapabilities()?.elicitation) return "not_asked";
    const answer = await mcp.server.elicitInput({ message, requestedSchema: confirmationForm(action) });
    if (answer.action === "accept") return answer.content?.confirm === true ? "accepted" : "declined";
    return answer.action === "decline" ? "declined" : "cancelled";
  };
}
