import { z } from "zod";
import { bucketName } from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

export const deleteBucket = defineTool({
  name: "delete_bucket",
  title: "Delete bucket",
  description: "Deletes an EMPTY bucket (never objects). Cannot be undone; confirm with the user first.",
  inputSchema: z.object({ bucket_name: bucketName }).strict(),
  outputSchema: z.object({ bucket: z.string(), deleted: z.boolean() }),
  // Idempotent in effect: deleting again changes nothing more (it reports NoSuchBucket).
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "admin",
  writesToStore: true,
  async handler(args, ctx) {
    await ctx.storage.deleteBucket(args.bucket_name, ctx.signal);
    return textOutput(`Deleted bucket s3://${args.bucket_name}.`, { bucket: args.bucket_name, deleted: true });
  },
});
