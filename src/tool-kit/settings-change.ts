/** What every settings change shares: a dry run unless confirm: true, the user asked where the client can, before → after in the result. */
import { z } from "zod";
import {
  CONFIRMATIONS,
  type ConfirmAction,
  type Confirmation,
  goesAhead,
  NOT_CONFIRMED,
} from "../runtime/confirmation.ts";
import type { ToolContext } from "./types.ts";

export const confirmArg = z.boolean().optional().describe("Else a dry run.");

export const changeOutput = z.object({
  bucket: z.string(),
  key: z.string().optional(),
  applied: z.boolean(),
  confirmation: z.enum(CONFIRMATIONS),
  before: z.unknown(),
  after: z.unknown(),
  note: z.string().optional(),
  next: z.string().optional().describe("The next call, when there is one."),
});
export type ChangeOutput = z.output<typeof changeOutput>;

/** What every settings change is, as data: its result, its annotations (a change can drop what was there), and who may have it. */
export const SETTINGS_CHANGE = {
  outputSchema: changeOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "admin",
  writesToStore: true,
  needsAllowAdmin: true,
} as const;

/** How the user answered (accepted, declined, cancelled, not_asked), or why nobody was asked (a dry run, nothing to change). */
export type Decision = Confirmation | "dry_run" | "unchanged";

/** Whether the change is made: the user said yes, or (where the client cannot ask) the model's confirm: true stands. */
export const applies = (decision: Decision) =>
  decision !== "dry_run" && decision !== "unchanged" && goesAhead(decision);

/**
 * The user's answer when confirmed (asked with `action`'s form where the client can), else why not.
 * `unchanged`: the setting already is what was asked for, so nobody is asked and nothing is written.
 */
export async function decide(
  confirm: boolean | undefined,
  action: ConfirmAction,
  question: string,
  ctx: ToolContext,
  unchanged = false,
): Promise<Decision> {
  if (unchanged) return "unchanged";
  if (confirm !== true) return "dry_run";
  return ctx.confirmWithUser(action, question);
}

/**
 * Whether a setting as read equals what a change would write: the same JSON,
 * whatever the order of object keys. Used only where the tool reads back
 * exactly what it writes (versioning, tags, a policy document); where a
 * form leaves parts of the stored setting out, a change always asks.
 */
export function sameSetting(before: unknown, after: unknown): boolean {
  return canonical(before) === canonical(after);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** The text and result of a change, applied or not. */
export function changeResult(
  tool: string,
  base: { bucket: string; key?: string },
  decision: Decision,
  what: string,
  before: unknown,
  after: unknown,
  note?: string,
) {
  const applied = applies(decision);
  const next =
    decision === "dry_run"
      ? `call ${tool} again with the same arguments and confirm: true to make the change.`
      : decision === "declined" || decision === "cancelled"
        ? NOT_CONFIRMED[decision].next
        : undefined;
  const leads: Record<Decision, string> = {
    accepted: `Changed (the user confirmed): ${what}.`,
    not_asked: `Changed: ${what}.`,
    declined: `${NOT_CONFIRMED.declined.lead}: ${what} was not changed.`,
    cancelled: `${NOT_CONFIRMED.cancelled.lead}: ${what} was not changed.`,
    dry_run: `Dry run: ${what}. Nothing changed.`,
    unchanged: `Already so: ${what} already is what was asked for. Nothing to change, so nobody was asked and nothing was written.`,
  };
  const lead = leads[decision];
  // Who was asked, for models that see only structuredContent: a dry run or a setting already so asked nobody.
  const confirmation: Confirmation = decision === "dry_run" || decision === "unchanged" ? "not_asked" : decision;
  const text = [
    lead,
    `Before: ${JSON.stringify(before)}`,
    `After: ${JSON.stringify(after)}`,
    note,
    next && `Next: ${next}`,
  ]
    .filter(Boolean)
    .join("\n");
  return {
    content: [{ type: "text" as const, text }],
    structured: { ...base, applied, confirmation, before, after, note, next },
  };
}
