import { z } from "zod";
import { bucketName } from "../tool-kit/schemas.ts";
import { applies, changeResult, confirmArg, decide, SETTINGS_CHANGE } from "../tool-kit/settings-change.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";
import { safeJson } from "./set-bucket-policy.ts";

export const deleteBucketPolicy = defineTool({
  name: "delete_bucket_policy",
  title: "Delete bucket policy",
  description: "Removes a bucket's policy.",
  inputSchema: z.object({ bucket_name: bucketName, confirm: confirmArg }).strict(),
  ...SETTINGS_CHANGE,
  async handler(args, ctx) {
    const stored = (await ctx.storage.readBucketSetting(args.bucket_name, "policy", ctx.signal)) as string | null;
    if (stored === null)
      return textOutput(`s3://${args.bucket_name} has no bucket policy; nothing to remove.`, {
        bucket: args.bucket_name,
        applied: false,
        confirmation: "not_asked",
        before: null,
        after: null,
      });
    const decision = await decide(args.confirm, "policy", `Remove the policy of s3://${args.bucket_name}?`, ctx);
    if (applies(decision)) await ctx.storage.setBucketPolicy(args.bucket_name, null, ctx.signal);
    return changeResult(
      "delete_bucket_policy",
      { bucket: args.bucket_name },
      decision,
      `the policy of s3://${args.bucket_name}`,
      safeJson(stored),
      null,
    );
  },
});
