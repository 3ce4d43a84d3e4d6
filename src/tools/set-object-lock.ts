/**
 * Object lock changes: an object's retention and legal hold, or a bucket's
 * default retention. Each is a dry run unless confirm: true, and asks the
 * user with the form its weight deserves: COMPLIANCE (nobody can lift it
 * before its date) and lifting a GOVERNANCE retention (which also needs
 * bypass_governance, so --allow-delete and the delete permission) have forms
 * of their own; lifting a legal hold needs the delete right too. A COMPLIANCE retention cannot be shortened or removed by
 * anyone: that is refused before anything is asked.
 */
import { z } from "zod";
import type { ConfirmAction } from "../runtime/confirmation.ts";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import { bucketName, objectKey, versionId } from "../tool-kit/schemas.ts";
import {
  applies,
  changeResult,
  confirmArg,
  decide,
  SETTINGS_CHANGE,
  sameSetting,
} from "../tool-kit/settings-change.ts";
import { defineTool, type ToolContext } from "../tool-kit/types.ts";

type Mode = "GOVERNANCE" | "COMPLIANCE";
type Retention = { mode: Mode; retain_until: string } | null;

const inputSchema = z
  .object({
    bucket_name: bucketName,
    object_key: objectKey.optional(),
    version_id: versionId.optional(),
    mode: z.enum(["GOVERNANCE", "COMPLIANCE", "NONE"]).optional().describe("NONE removes it."),
    retain_until: z.string().max(64).optional().describe('e.g. "2027-01-01".'),
    days: z.number().int().min(1).max(36_500).optional().describe("Bucket default."),
    legal_hold: z.enum(["ON", "OFF"]).optional(),
    bypass_governance: z.boolean().optional().describe("Lift GOVERNANCE retention early."),
    confirm: confirmArg,
  })
  .strict();
type Args = z.output<typeof inputSchema>;

const COMPLIANCE_WORDS =
  "In COMPLIANCE mode nobody, not even the account's administrators, can delete or overwrite it, or shorten or remove the retention, until that date.";

const invalid = (resource: string, message: string, hint: string) =>
  new ActionableError({ resource, code: "InvalidArgument", message, hint });

export const setObjectLock = defineTool({
  name: "set_object_lock",
  title: "Set object lock",
  description:
    "An object's retention (mode, retain_until) and legal hold; without object_key, the bucket's default retention (mode, days).",
  inputSchema,
  ...SETTINGS_CHANGE,
  // Both lift deletion protection, so both need what a delete needs (--allow-delete, the delete permission).
  deletes: (args) => args.bypass_governance === true || args.legal_hold === "OFF",
  deletesBy: 'bypass_governance: true or legal_hold: "OFF", which let a protected object be deleted sooner',
  async handler(args, ctx) {
    return args.object_key === undefined ? bucketDefault(args, ctx) : objectLock(args, args.object_key, ctx);
  },
});

async function bucketDefault(args: Args, ctx: ToolContext) {
  const where = `s3://${args.bucket_name}`;
  if (args.retain_until || args.legal_hold || args.version_id || args.bypass_governance)
    throw invalid(
      "object_key",
      "retain_until, legal_hold, version_id and bypass_governance are an object's; without object_key this sets the bucket's default retention.",
      "give object_key, or only mode and days for the bucket's default.",
    );
  if (!args.mode || (args.mode !== "NONE" && !args.days))
    throw invalid(
      "mode",
      "The bucket's default retention needs mode (GOVERNANCE or COMPLIANCE) and days, or mode NONE to remove it.",
      'call again with e.g. mode "GOVERNANCE", days 30.',
    );
  const lock = (await ctx.storage.readBucketSetting(args.bucket_name, "object_lock", ctx.signal)) as {
    default_retention: { mode: string | null; days?: number; years?: number } | null;
  } | null;
  if (!lock)
    throw new ActionableError({
      resource: where,
      code: "ObjectLockNotEnabled",
      message: "Object lock is not enabled on this bucket, so it has no retention to set.",
      hint: "a bucket gets object lock when it is created (on AWS also later, once versioning is on); ask the user.",
    });
  const before = lock.default_retention;
  const after = args.mode === "NONE" ? null : { mode: args.mode as Mode, days: args.days! };
  const words =
    after === null
      ? `Remove the default retention of ${where}? New objects will not be protected from deletion unless a call asks.`
      : `Keep every new object in ${where} from deletion for ${after.days} days (${after.mode})?${after.mode === "COMPLIANCE" ? ` ${COMPLIANCE_WORDS}` : ""}`;
  const decision = await decide(
    args.confirm,
    after?.mode === "COMPLIANCE" ? "compliance" : "default_retention",
    words,
    ctx,
    sameSetting(before, after),
  );
  if (applies(decision)) await ctx.storage.setDefaultRetention(args.bucket_name, after, ctx.signal);
  return changeResult(
    "set_object_lock",
    { bucket: args.bucket_name },
    decision,
    `the default retention of ${where}`,
    before,
    after,
    after?.mode === "COMPLIANCE" ? COMPLIANCE_WORDS : "It applies to objects written from now on, not to those there.",
  );
}

async function objectLock(args: Args, key: string, ctx: ToolContext) {
  const resource = s3Uri(args.bucket_name, key);
  if (args.days)
    throw invalid(
      "days",
      "days is the bucket's default retention; an object's retention ends on retain_until.",
      "give retain_until instead.",
    );
  if (!args.mode && !args.legal_hold)
    throw invalid(
      "mode",
      "Nothing to change: give mode with retain_until, mode NONE, or legal_hold.",
      'e.g. mode "GOVERNANCE", retain_until "2027-01-01".',
    );
  if (args.retain_until && (!args.mode || args.mode === "NONE"))
    throw invalid(
      "retain_until",
      "retain_until needs mode GOVERNANCE or COMPLIANCE.",
      'add mode "GOVERNANCE" (or "COMPLIANCE").',
    );
  const wanted: Retention | undefined =
    args.mode === undefined
      ? undefined
      : args.mode === "NONE"
        ? null
        : { mode: args.mode, retain_until: untilDate(args.retain_until) };
  const addr = { bucket: args.bucket_name, key, ...(args.version_id ? { versionId: args.version_id } : {}) };
  const current = await ctx.storage.getObjectLock(addr, ctx.signal);
  const held = current.retention as Retention;
  // A retention whose date has passed protects nothing any more: changing it lifts nothing.
  const active = held && !(Date.parse(held.retain_until) <= Date.now()) ? held : null;
  const lifts = wanted !== undefined && active !== null && liftsEarlier(active, wanted);
  if (lifts && held?.mode === "COMPLIANCE")
    throw new ActionableError({
      resource,
      code: "ComplianceRetention",
      message: `${resource} is under COMPLIANCE retention until ${held.retain_until}: nobody can shorten or remove it, or change its mode.`,
      hint: "a later retain_until is the only change it takes; the object can be deleted after that date.",
    });
  if (lifts && !args.bypass_governance)
    throw new ActionableError({
      resource,
      code: "BypassNeeded",
      message: `${resource} is under GOVERNANCE retention until ${held?.retain_until}; this would shorten or remove it, which lets the object be deleted sooner.`,
      hint: "call again with bypass_governance: true (the server must allow deletes, and the credentials s3:BypassGovernanceRetention), or with a later retain_until.",
    });
  const before = { retention: held, legal_hold: current.legal_hold ?? "OFF" };
  const after = {
    retention: wanted === undefined ? held : wanted,
    legal_hold: args.legal_hold ?? before.legal_hold,
  };
  const action: ConfirmAction = lifts
    ? "retention_shorten"
    : wanted?.mode === "COMPLIANCE"
      ? "compliance"
      : wanted !== undefined && !sameSetting(held, wanted)
        ? "retention"
        : "legal_hold";
  const question = [
    wanted === null
      ? `Remove the retention of ${resource}?`
      : wanted
        ? `Keep ${resource} from deletion and overwriting until ${wanted.retain_until} (${wanted.mode})?`
        : undefined,
    wanted?.mode === "COMPLIANCE" ? COMPLIANCE_WORDS : undefined,
    args.legal_hold && args.legal_hold !== before.legal_hold ? `Turn its legal hold ${args.legal_hold}?` : undefined,
  ]
    .filter(Boolean)
    .join(" ");
  const decision = await decide(args.confirm, action, question, ctx, sameSetting(before, after));
  if (applies(decision)) {
    if (!sameSetting(held, after.retention))
      await ctx.storage.setObjectRetention(addr, after.retention, lifts, ctx.signal);
    if (after.legal_hold !== before.legal_hold)
      await ctx.storage.setObjectLegalHold(addr, after.legal_hold as "ON" | "OFF", ctx.signal);
  }
  return changeResult(
    "set_object_lock",
    { bucket: args.bucket_name, key },
    decision,
    `the object lock of ${resource}`,
    before,
    after,
    wanted?.mode === "COMPLIANCE" ? COMPLIANCE_WORDS : undefined,
  );
}

/** A retention date: a valid date in the future, as ISO 8601. */
function untilDate(text: string | undefined): string {
  const date = text ? new Date(text) : undefined;
  if (!date || Number.isNaN(date.getTime()))
    throw invalid(
      "retain_until",
      `retain_until ${JSON.stringify(text ?? "")} is not a date.`,
      'give an ISO date, e.g. "2027-01-01".',
    );
  if (date.getTime() <= Date.now())
    throw invalid("retain_until", `retain_until ${date.toISOString()} is not in the future.`, "give a later date.");
  return date.toISOString();
}

/** Whether `wanted` protects for less than `held`: removed, an earlier date, or COMPLIANCE made GOVERNANCE. */
function liftsEarlier(held: NonNullable<Retention>, wanted: Retention): boolean {
  if (wanted === null) return true;
  if (held.mode === "COMPLIANCE" && wanted.mode === "GOVERNANCE") return true;
  return new Date(wanted.retain_until).getTime() < new Date(held.retain_until).getTime();
}
