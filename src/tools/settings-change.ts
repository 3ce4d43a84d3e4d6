/** What every settings change shares: a dry run unless confirm: true, the user asked where the client can, before → after in the result. */
import { z } from "zod";
import type { ToolContext } from "./types.ts";

export const confirmArg = z.boolean().optional().describe("true: apply (else a dry run).");

export const changeOutput = z.object({
  bucket: z.string(),
  key: z.string().optional(),
  applied: z.boolean(),
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

/** "apply" when confirmed (and the user agreed where the client can ask), else why not. */
export async function decide(confirm: boolean | undefined, question: string, ctx: ToolContext): Promise<"apply" | "dry_run" | "declined"> {
  if (confirm !== true) return "dry_run";
  return (await ctx.confirmWithUser(question)) === false ? "declined" : "apply";
}

/** The text and result of a change, applied or not. */
export function changeResult(tool: string, base: { bucket: string; key?: string }, decision: "apply" | "dry_run" | "declined", what: string, before: unknown, after: unknown, note?: string) {
  const applied = decision === "apply";
  const next = decision === "dry_run" ? `call ${tool} again with the same arguments and confirm: true to make the change.` : undefined;
  const lead = applied ? `Changed: ${what}.` : decision === "declined" ? `The user declined: ${what} was not changed.` : `Dry run: ${what}. Nothing changed.`;
  const text = [lead, `Before: ${JSON.stringify(before)}`, `After: ${JSON.stringify(after)}`, note, next && `Next: ${next}`].filter(Boolean).join("\n");
  return { content: [{ type: "text" as const, text }], structured: { ...base, applied, before, after, ...(note ? { note } : {}), ...(next ? { next } : {}) } };
}
