import { z } from "zod";
import { ActionableError } from "../runtime/errors.ts";
import type { LifecycleRule } from "../storage/index.ts";
import { bucketName, storageClass } from "../tool-kit/schemas.ts";
import { applies, changeResult, confirmArg, decide, SETTINGS_CHANGE } from "../tool-kit/settings-change.ts";
import { defineTool } from "../tool-kit/types.ts";
import { ruleSentence } from "./get-bucket-settings.ts";

const days = z.number().int().min(1);
const rule = z
  .object({
    id: z.string().min(1).max(255).describe("Rule name."),
    prefix: z.string().max(1024).optional().describe('e.g. "tmp/".'),
    tag: z
      .object({ key: z.string().min(1).max(128), value: z.string().max(256) })
      .strict()
      .optional()
      .describe("Only with this tag."),
    expire_after_days: days.optional(),
    noncurrent_expire_after_days: days.optional().describe("Days after replacement."),
    keep_noncurrent_versions: z.number().int().min(1).max(100).optional().describe("Old versions kept anyway."),
    abort_incomplete_uploads_after_days: days.optional(),
    transition_after_days: z.number().int().min(0).optional(),
    transition_storage_class: storageClass.optional(),
    enabled: z.boolean().optional().describe("Default true."),
  })
  .strict();

export const setBucketLifecycle = defineTool({
  name: "set_bucket_lifecycle",
  title: "Set bucket lifecycle rules",
  description:
    "Adds or updates lifecycle rules by id: after N days expire objects (by prefix or tag) or old versions, abort uploads, change class. " +
    "Expiry and replace need delete.",
  inputSchema: z
    .object({
      bucket_name: bucketName,
      rules: z.array(rule).max(100).describe("Merged by id."),
      replace: z.boolean().optional().describe("true: drop rules not given."),
      confirm: confirmArg,
    })
    .strict(),
  ...SETTINGS_CHANGE,
  // The store deletes on the rules' behalf: every place a delete needs permission, so does this.
  deletes: (args) => args.replace === true || args.rules.some(expires),
  deletesBy: "a lifecycle rule that expires objects or old versions, or replace: true",
  async handler(args, ctx) {
    const resource = `s3://${args.bucket_name}`;
    const given: LifecycleRule[] = args.rules.map(({ enabled, ...r }) => ({ ...r, enabled: enabled ?? true }));
    for (const r of given) {
      const problem = ruleProblem(r);
      if (problem)
        throw new ActionableError({
          resource,
          code: "InvalidLifecycleRule",
          message: `Rule ${JSON.stringify(r.id)} ${problem}.`,
          hint: "fix that rule and call again.",
        });
    }
    const ids = new Set(given.map((r) => r.id));
    if (ids.size !== given.length)
      throw new ActionableError({
        resource,
        code: "InvalidLifecycleRule",
        message: "Two rules have the same id.",
        hint: "give each rule its own id.",
      });
    if (given.length === 0 && !args.replace)
      throw new ActionableError({
        resource,
        code: "InvalidParameter",
        message: "No rules given.",
        hint: "give rules, or rules: [] with replace: true to remove every rule.",
      });
    const before =
      ((await ctx.storage.readBucketSetting(args.bucket_name, "lifecycle", ctx.signal)) as LifecycleRule[] | null) ??
      [];
    const kept = args.replace ? [] : before.filter((r) => !ids.has(r.id));
    const after = [...kept, ...given];
    const decision = await decide(
      args.confirm,
      "lifecycle",
      `Set the lifecycle rules of ${resource} to: ${after.map(ruleSentence).join("; ") || "none"}?`,
      ctx,
    );
    if (applies(decision))
      await ctx.storage.setBucketLifecycle(
        args.bucket_name,
        { keep: kept.map((r) => r.id), set: given, deletes: args.replace === true || given.some(expires) },
        ctx.signal,
      );
    const dropped = args.replace ? before.filter((r) => !ids.has(r.id)).map((r) => r.id) : [];
    const note =
      `After: ${after.map(ruleSentence).join("; ") || "no rules"}.` +
      (dropped.length ? ` Removed rules: ${dropped.join(", ")}.` : "");
    return changeResult(
      "set_bucket_lifecycle",
      { bucket: args.bucket_name },
      decision,
      `the lifecycle rules of ${resource}`,
      before,
      after,
      note,
    );
  },
});

/** Whether a rule has the store delete objects or versions (aborting an upload or a transition deletes no object). */
function expires(r: {
  expire_after_days?: number;
  noncurrent_expire_after_days?: number;
  keep_noncurrent_versions?: number;
}): boolean {
  return (
    r.expire_after_days !== undefined ||
    r.noncurrent_expire_after_days !== undefined ||
    r.keep_noncurrent_versions !== undefined
  );
}

function ruleProblem(r: LifecycleRule): string | undefined {
  if (
    [
      r.expire_after_days,
      r.noncurrent_expire_after_days,
      r.keep_noncurrent_versions,
      r.abort_incomplete_uploads_after_days,
      r.transition_after_days,
    ].every((v) => v === undefined)
  )
    return "does nothing: give at least one of the *_days settings";
  if ((r.transition_after_days === undefined) !== (r.transition_storage_class === undefined))
    return "needs transition_after_days and transition_storage_class together";
  if (r.abort_incomplete_uploads_after_days !== undefined && r.tag)
    return "filters by tag, which S3 does not allow with abort_incomplete_uploads_after_days";
  return undefined;
}
