import { z } from "zod";
import { s3Uri } from "../runtime/errors.ts";
import { bucketName, objectKey } from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

export const deleteObject = defineTool({
  name: "delete_object",
  title: "Delete object",
  description:
    "Deletes one object: versioned, a delete marker (restorable) or with version_id that version for good; unversioned, gone for good. Get the user's go-ahead first.",
  inputSchema: z
    .object({
      bucket_name: bucketName,
      object_key: objectKey,
      version_id: z.string().min(1).max(1024).optional().describe("Remove this version permanently."),
    })
    .strict(),
  outputSchema: z.object({
    bucket: z.string(),
    key: z.string(),
    version_id: z.string().nullable(),
    delete_marker: z.boolean(),
    permanent: z.boolean(),
    next: z.string().optional().describe("How to undo it."),
  }),
  // Not idempotent: in a versioned bucket each call adds another delete marker.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  group: "delete",
  writesToStore: true,
  async handler(args, ctx) {
    const out = await ctx.storage.deleteObject(
      { bucket: args.bucket_name, key: args.object_key, ...(args.version_id ? { versionId: args.version_id } : {}) },
      ctx.signal,
    );
    const uri = s3Uri(args.bucket_name, args.object_key);
    const permanent = args.version_id !== undefined || !out.delete_marker;
    const restore =
      !args.version_id && out.delete_marker
        ? `to restore, copy_object the wanted version (see list_object_versions) onto the key, or delete_object this marker's version_id ${out.version_id}.`
        : undefined;
    const text = args.version_id
      ? `Permanently removed version ${args.version_id} of ${uri}${out.delete_marker ? " (it was a delete marker: the previous version is current again)" : ""}.`
      : restore
        ? `Deleted ${uri} by adding delete marker ${out.version_id}. Older versions remain: ${restore}`
        : `Deleted ${uri}. (The bucket keeps no versions, so this cannot be undone.)`;
    return textOutput(text, {
      bucket: args.bucket_name,
      key: args.object_key,
      version_id: out.version_id,
      delete_marker: out.delete_marker,
      permanent,
      next: restore,
    });
  },
});
