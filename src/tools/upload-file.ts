import { z } from "zod";
import { bucketName, objectKey } from "./schemas.ts";
import { defineTool, textOutput } from "./types.ts";

const headerValue = (what: string) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(1024)
    .refine((s) => !/[\r\n\0]/.test(s), `${what} must be a single line`);

export const uploadFile = defineTool({
  name: "upload_file",
  title: "Upload file",
  description:
    "Uploads one local file to s3://bucket_name/object_key, streaming it (large files go up in parts, up to 5 TiB). " +
    "REPLACES an existing object at that key without asking (on a versioned bucket the old one stays as an older version). " +
    "The content type is detected from the file name (then the key) when content_type is omitted. " +
    "local_file_path must be a regular file inside the directories the server may read; relative paths start from the first of them.",
  inputSchema: z
    .object({
      local_file_path: z.string().min(1, "local_file_path must not be empty").max(4096).describe("Path of the local file to upload, e.g. \"./report.pdf\" or \"/home/me/data/report.pdf\"."),
      bucket_name: bucketName.describe("Bucket to upload into."),
      object_key: objectKey.describe("Key to store the file under, e.g. \"reports/2024/report.pdf\". An existing object there is replaced."),
      content_type: headerValue("content_type")
        .refine((s) => /^[\w.+-]+\/[\w.+-]+/.test(s), "content_type must look like type/subtype, e.g. text/plain")
        .optional()
        .describe("MIME type, e.g. \"application/pdf\". Omit to detect it from the file name."),
      storage_class: z
        .string()
        .regex(/^[A-Z0-9_]{1,64}$/, "storage_class is an uppercase name such as STANDARD, STANDARD_IA, INTELLIGENT_TIERING, GLACIER_IR")
        .optional()
        .describe("Storage class, e.g. STANDARD (the default), STANDARD_IA, INTELLIGENT_TIERING, GLACIER_IR. Not every store offers every class."),
      cache_control: headerValue("cache_control").optional().describe("Cache-Control header to store with the object, e.g. \"max-age=3600\"."),
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
  writesToStore: true,
  async handler(args, ctx) {
    ctx.checkBucket(args.bucket_name);
    const source = await ctx.files.openForUpload(args.local_file_path);
    try {
      const contentType = args.content_type ?? (await detectContentType(source.path, args.object_key));
      const result = await ctx.storage.uploadObject(
        {
          bucket: args.bucket_name,
          key: args.object_key,
          readAt: source.readAt,
          size: source.size,
          contentType,
          ...(args.storage_class ? { storageClass: args.storage_class } : {}),
          ...(args.cache_control ? { cacheControl: args.cache_control } : {}),
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
      return textOutput(`Uploaded ${args.local_file_path} (${source.size} bytes, ${contentType}) to s3://${args.bucket_name}/${args.object_key}${version}.`, structured);
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
