import { z } from "zod";
import { ActionableError } from "../runtime/errors.ts";
import { accessWords, parsePolicy, publicGrants } from "../tool-kit/bucket-policy.ts";
import { bucketName } from "../tool-kit/schemas.ts";
import {
  applies,
  changeResult,
  confirmArg,
  decide,
  SETTINGS_CHANGE,
  sameSetting,
} from "../tool-kit/settings-change.ts";
import { defineTool } from "../tool-kit/types.ts";

export const setBucketPolicy = defineTool({
  name: "set_bucket_policy",
  title: "Set bucket policy",
  description:
    'Replaces a bucket policy (JSON). One granting anything to everyone (Principal "*") needs allow_public: true.',
  inputSchema: z
    .object({
      bucket_name: bucketName,
      policy: z.string().min(2).describe("The policy document as JSON text."),
      allow_public: z.boolean().optional().describe("true: allow grants to everyone."),
      confirm: confirmArg,
    })
    .strict(),
  ...SETTINGS_CHANGE,
  async handler(args, ctx) {
    const resource = `s3://${args.bucket_name}`;
    const doc = parsePolicy(args.policy, resource);
    const grants = publicGrants(doc);
    if (grants.length && !args.allow_public) {
      throw new ActionableError({
        resource,
        code: "PublicPolicyRefused",
        message: `This policy gives everyone (Principal "*") ${accessWords(grants)}: ${grants.join("; ")}.`,
        hint: "name the principals who need access instead; only if the user really wants the bucket public, call again with allow_public: true.",
      });
    }
    const stored = (await ctx.storage.readBucketSetting(args.bucket_name, "policy", ctx.signal)) as string | null;
    const before = stored === null ? null : safeJson(stored);
    const publicNote = grants.length
      ? `PUBLIC: everyone gets ${grants.join("; ")}.`
      : "Nothing is public through this policy.";
    const decision = await decide(
      args.confirm,
      "policy",
      `Replace the policy of ${resource}? ${publicNote}`,
      ctx,
      sameSetting(before, doc),
    );
    if (applies(decision)) await ctx.storage.setBucketPolicy(args.bucket_name, JSON.stringify(doc), ctx.signal);
    return changeResult(
      "set_bucket_policy",
      { bucket: args.bucket_name },
      decision,
      `the policy of ${resource}`,
      before,
      doc,
      publicNote,
    );
  },
});

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
