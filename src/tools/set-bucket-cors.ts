import { z } from "zod";
import type { CorsRule } from "../storage/index.ts";
import { bucketName } from "../tool-kit/schemas.ts";
import { applies, changeResult, confirmArg, decide, SETTINGS_CHANGE } from "../tool-kit/settings-change.ts";
import { defineTool } from "../tool-kit/types.ts";

const names = () => z.array(z.string().min(1).max(256));

export const setBucketCors = defineTool({
  name: "set_bucket_cors",
  title: "Set bucket CORS",
  description: "Replaces a bucket's CORS rules (which web origins may call it).",
  inputSchema: z
    .object({
      bucket_name: bucketName,
      rules: z
        .array(
          z
            .object({
              allowed_origins: names().min(1).describe('e.g. ["https://app.example.com"]'),
              allowed_methods: z.array(z.enum(["GET", "PUT", "POST", "DELETE", "HEAD"])).min(1),
              allowed_headers: names().optional(),
              expose_headers: names().optional(),
              max_age_seconds: z.number().int().min(0).max(86400).optional(),
            })
            .strict(),
        )
        .max(100)
        .describe("[] removes them."),
      confirm: confirmArg,
    })
    .strict(),
  ...SETTINGS_CHANGE,
  async handler(args, ctx) {
    const before =
      ((await ctx.storage.readBucketSetting(args.bucket_name, "cors", ctx.signal)) as CorsRule[] | null) ?? [];
    const after: CorsRule[] = args.rules;
    const origins = [...new Set(after.flatMap((r) => r.allowed_origins))];
    const decision = await decide(
      args.confirm,
      "cors",
      `${after.length ? `Let ${origins.join(", ")} call` : "Remove the CORS rules of"} s3://${args.bucket_name}?`,
      ctx,
    );
    if (applies(decision)) await ctx.storage.setBucketCors(args.bucket_name, after, ctx.signal);
    const note = origins.includes("*") ? 'Any web origin may call the bucket from a browser ("*").' : undefined;
    return changeResult(
      "set_bucket_cors",
      { bucket: args.bucket_name },
      decision,
      `the CORS rules of s3://${args.bucket_name}`,
      before,
      after,
      note,
    );
  },
});
