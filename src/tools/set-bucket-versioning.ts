import { z } from "zod";
import { bucketName } from "../tool-kit/schemas.ts";
import { applies, changeResult, confirmArg, decide, SETTINGS_CHANGE } from "../tool-kit/settings-change.ts";
import { defineTool } from "../tool-kit/types.ts";

const ONE_WAY = "Once enabled it can never be turned off again, only suspended.";

export const setBucketVersioning = defineTool({
  name: "set_bucket_versioning",
  title: "Set bucket versioning",
  description: `Enables or suspends versioning. ${ONE_WAY}`,
  inputSchema: z
    .object({
      bucket_name: bucketName,
      status: z.enum(["Enabled", "Suspended"]).describe("Suspended keeps old versions."),
      confirm: confirmArg,
    })
    .strict(),
  ...SETTINGS_CHANGE,
  async handler(args, ctx) {
    const current = (await ctx.storage.readBucketSetting(args.bucket_name, "versioning", ctx.signal)) as {
      status: string;
    } | null;
    const before = current?.status ?? "never enabled";
    const decision = await decide(
      args.confirm,
      "versioning",
      `Set versioning of s3://${args.bucket_name} to ${args.status}? ${ONE_WAY}`,
      ctx,
      before === args.status,
    );
    if (applies(decision)) await ctx.storage.setBucketVersioning(args.bucket_name, args.status, ctx.signal);
    return changeResult(
      "set_bucket_versioning",
      { bucket: args.bucket_name },
      decision,
      `versioning of s3://${args.bucket_name}`,
      before,
      args.status,
      ONE_WAY,
    );
  },
});
