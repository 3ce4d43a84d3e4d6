/**
 * A user's answer to a confirmation, as every confirmable tool reports it in
 * structuredContent (models that see only structuredContent must learn that
 * the user said no), and what the model is told to do next.
 */

/** What a confirmation is about: each has its own form (mcp/confirmations.ts). */
export type ConfirmAction =
  | "tags"
  | "versioning"
  | "lifecycle"
  | "cors"
  | "policy"
  | "delete"
  | "move"
  | "mirror_delete"
  | "retention"
  | "compliance"
  | "retention_shorten"
  | "legal_hold"
  | "default_retention"
  | "restore";

/** accepted; declined (no, or the box left unticked); cancelled (the form dismissed or not answered); not_asked (the client cannot ask, or nothing needed asking). */
export type Confirmation = "accepted" | "declined" | "cancelled" | "not_asked";

export const CONFIRMATIONS = ["accepted", "declined", "cancelled", "not_asked"] as const;

/** Whether a confirmed call goes ahead: the user said yes, or (where the client cannot ask) the model's confirm: true stands. */
export const goesAhead = (answer: Confirmation) => answer === "accepted" || answer === "not_asked";

/** What a model is told after the user said no, or did not answer: not to ask again on its own. */
export const NOT_CONFIRMED: Record<"declined" | "cancelled", { lead: string; next: string }> = {
  declined: { lead: "The user declined", next: "do not call again unless the user asks for it." },
  cancelled: {
    lead: "The confirmation was dismissed or not answered",
    next: "do not retry unless the user asks for it.",
  },
};
