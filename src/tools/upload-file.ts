import { z } from "zod";
import {
  bucketName,
  cacheControl,
  callEncryption,
  contentType,
  encryptionArgs,
  objectKey,
  storageClass,
} from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

export const uploadFile = defineTool({
  name: "upload_file",
  // Its result's size is the bytes it moved (elsewhere, as in head_object, a size only describes an object).
  bytesField: "size",
  title: "Upload file",
  description: "Uploads one local file (in the allowed directories) to an object. REPLACES an existing object.",
  inputSchema: z
    .object({
      local_file_path: z
        .string()
        .min(1, "local_file_path must not be empty")
        .max(4096)
        .describe('Local file, e.g. "./report.pdf".'),
      bucket_name: bucketName,
      object_key: objectKey.describe('e.g. "reports/q1.pdf".'),
      content_type: contentType.optional(),
      storage_class: storageClass.optional(),
      cache_control: cacheControl.optional(),
      ...encryptionArgs,
    })
    .strict(),
  outputSchema: z.object({
    bucket: z.string(),
    key: z.string(),
    size: z.number(),
    etag: z.string().nullable(),
    version_id: z.string().nullable(),
    content_type: z.string(),
    storage_class: z.string(),
  }),
  // Destructive: it silently replaces whatever object had this key.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "write",
  handsBack: true,
  writesToStore: true,
  localFiles: "always",
  async handler(args, ctx) {
    const encryption = callEncryption(args);
    const source = await ctx.files.openForUpload(args.local_file_path);
    try {
      const contentType = args.content_type ?? (await detectContentType(source.path, args.object_key));
      const result = await ctx.storage.uploadObject(
        {
          bucket: args.bucket_name,
          key: args.object_key,
          readAt: source.readAt,
          slice: source.slice,
          size: source.size,
          // A cut upload of this file is kept and continued by the next call (docs/reliability.md).
          source: { id: source.path, version: String(source.mtimeMs) },
          contentType,
          ...(args.storage_class ? { storageClass: args.storage_class } : {}),
          ...(args.cache_control ? { cacheControl: args.cache_control } : {}),
          ...(encryption ? { encryption } : {}),
          onProgress: ctx.progress.start(
            source.size,
            `uploading ${args.local_file_path} to s3://${args.bucket_name}/${args.object_key}`,
          ),
        },
        ctx.signal,
      );
      const structured = {
        bucket: args.bucket_name,
        key: args.object_key,
        size: source.size,
        etag: result.etag,
        version_id: result.version_id,
        content_type: contentType,
        storage_class: args.storage_class ?? "STANDARD",
      };
      const version = result.version_id ? `, version ${result.version_id}` : "";
      return textOutput(
        `Uploaded ${args.local_file_path} (${source.size} bytes, ${contentType}) to s3://${args.bucket_name}/${args.object_key}${version}.`,
        structured,
      );
    } finally {
      await source.close();
    }
  },
});

/** From the file name, else the key's extension, else application/octet-stream. */
export async function detectContentType(localPath: string, key: string): Promise<string> {
  // mime-types carries a large table: load it on first use, not at start-up.
  const { lookup } = await import("mime-types");
  return lookup(localPath) || lookup(key) || "application/octet-stream";
}
