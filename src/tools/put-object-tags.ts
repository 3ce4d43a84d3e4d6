import { z } from "zod";
import { ActionableError } from "../runtime/errors.ts";
import { bucketName, objectKey, versionId } from "../tool-kit/schemas.ts";
import {
  applies,
  changeResult,
  confirmArg,
  decide,
  SETTINGS_CHANGE,
  sameSetting,
} from "../tool-kit/settings-change.ts";
import { defineTool } from "../tool-kit/types.ts";

/** S3's limits for object tags. */
const MAX_TAGS = 10;

export const putObjectTags = defineTool({
  name: "put_object_tags",
  title: "Set object tags",
  description: `Sets an object's tags: merge (default) or replace; at most ${MAX_TAGS}, keys ≤ 128, values ≤ 256 characters.`,
  inputSchema: z
    .object({
      bucket_name: bucketName,
      object_key: objectKey,
      version_id: versionId.optional(),
      tags: z.record(z.string(), z.string()).describe('e.g. {"legal-hold": "2026-q4"}.'),
      mode: z.enum(["merge", "replace"]).optional().describe("Default merge."),
      confirm: confirmArg,
    })
    .strict(),
  ...SETTINGS_CHANGE,
  async handler(args, ctx) {
    const resource = `s3://${args.bucket_name}/${args.object_key}`;
    // S3's limits, checked before anything is sent (a record's key errors would otherwise not say which limit).
    for (const [key, value] of Object.entries(args.tags)) {
      const problem =
        key.length === 0 || key.length > 128
          ? "a tag key is 1 to at most 128 characters"
          : value.length > 256
            ? "a tag value is at most 256 characters"
            : key.toLowerCase().startsWith("aws:")
              ? 'keys starting with "aws:" belong to AWS'
              : /[\0-\x1f]/.test(key + value)
                ? "tags have no control characters"
                : undefined;
      if (problem)
        throw new ActionableError({
          resource,
          code: "InvalidTag",
          message: `The tag ${JSON.stringify(key.slice(0, 140))}: ${problem}.`,
          hint: "fix that tag and call again.",
        });
    }
    const addr = {
      bucket: args.bucket_name,
      key: args.object_key,
      ...(args.version_id ? { versionId: args.version_id } : {}),
    };
    const before = await ctx.storage.getObjectTags(addr, ctx.signal);
    const after = args.mode === "replace" ? { ...args.tags } : { ...before, ...args.tags };
    if (Object.keys(after).length > MAX_TAGS) {
      throw new ActionableError({
        resource,
        code: "TooManyTags",
        message: `That would give the object ${Object.keys(after).length} tags; S3 allows ${MAX_TAGS}.`,
        hint: 'use mode "replace" with at most 10 tags, or fewer new ones.',
      });
    }
    const decision = await decide(
      args.confirm,
      "tags",
      `Set the tags of ${resource} to ${JSON.stringify(after)}?`,
      ctx,
      sameSetting(before, after),
    );
    if (applies(decision)) await ctx.storage.putObjectTags(addr, after, ctx.signal);
    return changeResult(
      "put_object_tags",
      { bucket: args.bucket_name, key: args.object_key },
      decision,
      `the tags of ${resource}`,
      before,
      after,
    );
  },
});
