import { z } from "zod";
import { bucketName, objectKey, versionId } from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

export const getObjectTags = defineTool({
  name: "get_object_tags",
  title: "Get object tags",
  description: "An object's tags, and its retention and legal hold under object lock.",
  inputSchema: z.object({ bucket_name: bucketName, object_key: objectKey, version_id: versionId.optional() }).strict(),
  outputSchema: z.object({
    bucket: z.string(),
    key: z.string(),
    tags: z.record(z.string(), z.string()),
    retention: z.unknown().optional(),
    legal_hold: z.string().nullable().optional(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  writesToStore: false,
  async handler(args, ctx) {
    const addr = {
      bucket: args.bucket_name,
      key: args.object_key,
      ...(args.version_id ? { versionId: args.version_id } : {}),
    };
    const [tags, lock] = await Promise.all([
      ctx.storage.getObjectTags(addr, ctx.signal),
      ctx.storage.readBucketSetting(args.bucket_name, "object_lock", ctx.signal).catch(() => null),
    ]);
    const held = lock ? await ctx.storage.getObjectLock(addr, ctx.signal) : undefined;
    const text =
      `s3://${args.bucket_name}/${args.object_key}: ${
        Object.keys(tags).length
          ? Object.entries(tags)
              .map(([k, v]) => `${k}=${v}`)
              .join(", ")
          : "no tags"
      }` +
      (held
        ? `; retention ${held.retention ? `${held.retention.mode} until ${held.retention.retain_until}` : "none"}; legal hold ${held.legal_hold ?? "OFF"}`
        : "");
    return textOutput(text, {
      bucket: args.bucket_name,
      key: args.object_key,
      tags,
      ...(held ? { retention: held.retention, legal_hold: held.legal_hold } : {}),
    });
  },
});
