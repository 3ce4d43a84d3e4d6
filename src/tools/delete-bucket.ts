import { z } from "zod";
import { bucketName } from "./schemas.ts";
import { defineTool, textOutput } from "./types.ts";

export const deleteBucket = defineTool({
  name: "delete_bucket",
  title: "Delete bucket",
  description:
    "Deletes an EMPTY bucket. It never deletes objects: a bucket that still holds objects (or object versions) is refused with BucketNotEmpty. " +
    "This cannot be undone; confirm with the user before deleting a bucket they did not just create.",
  inputSchema: z.object({ bucket_name: bucketName.describe("Name of the empty bucket to delete.") }).strict(),
  outputSchema: z.object({ bucket: z.string(), deleted: z.boolean() }),
  // Idempotent in effect: deleting again changes nothing more (it reports NoSuchBucket).
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  writesToStore: true,
  async handler(args, ctx) {
    ctx.checkBucket(args.bucket_name);
    await ctx.storage.deleteBucket(args.bucket_name, ctx.signal);
    return textOutput(`Deleted bucket s3://${args.bucket_name}.`, { bucket: args.bucket_name, deleted: true });
  },
});
