import { z } from "zod";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import {
  bucketName,
  cacheControl,
  callEncryption,
  contentType,
  encryptionArgs,
  ifAbsent,
  metadata,
  objectKey,
  storageClass,
} from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";
import { detectContentType } from "./upload-file.ts";

/** The most put_object writes in one call: well inside one protocol message, even as base64. */
export const PUT_OBJECT_MAX_BYTES = 4 * 1024 * 1024;

export const putObject = defineTool({
  name: "put_object",
  // Its result's size is the bytes it moved (elsewhere, as in head_object, a size only describes an object).
  bytesField: "size",
  title: "Write object",
  description:
    "Writes text (or base64), at most 4 MiB, to an object (files: upload_file). " +
    "REPLACES an existing object unless if_absent.",
  inputSchema: z
    .object({
      bucket_name: bucketName,
      object_key: objectKey,
      content: z
        .string()
        .max(
          Math.ceil((PUT_OBJECT_MAX_BYTES * 4) / 3) + 4096,
          `content is at most ${PUT_OBJECT_MAX_BYTES} bytes (4 MiB)`,
        )
        .describe("Text, or base64 with encoding base64."),
      encoding: z.enum(["utf-8", "base64"]).optional().describe("Default utf-8."),
      content_type: contentType.optional(),
      cache_control: cacheControl.optional(),
      storage_class: storageClass.optional(),
      metadata: metadata.optional(),
      if_absent: ifAbsent.optional(),
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
  }),
  // Destructive: without if_absent it replaces whatever object had this key.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "write",
  writesToStore: true,
  async handler(args, ctx) {
    const encryption = callEncryption(args);
    const body = decode(args.content, args.encoding ?? "utf-8");
    if (body.length > PUT_OBJECT_MAX_BYTES) {
      throw new ActionableError({
        resource: "content",
        code: "ContentTooLarge",
        message: `The content is ${body.length} bytes; put_object writes at most ${PUT_OBJECT_MAX_BYTES}.`,
        hint: "save it to a file inside an allowed directory and use upload_file, which streams any size.",
      });
    }
    const type = args.content_type ?? (await detectType(args.object_key, args.encoding ?? "utf-8"));
    const out = await ctx.storage.putObject(
      {
        bucket: args.bucket_name,
        key: args.object_key,
        body,
        contentType: type,
        cacheControl: args.cache_control,
        storageClass: args.storage_class,
        metadata: args.metadata,
        ifAbsent: args.if_absent,
        encryption,
      },
      ctx.signal,
    );
    const version = out.version_id ? `, version ${out.version_id}` : "";
    return textOutput(
      `Wrote ${body.length} bytes (${type}) to ${s3Uri(args.bucket_name, args.object_key)}${version}.`,
      {
        bucket: args.bucket_name,
        key: args.object_key,
        size: body.length,
        ...out,
        content_type: type,
      },
    );
  },
});

/** The bytes to store; base64 must be strictly valid (whitespace aside), never decoded leniently into garbage. */
function decode(content: string, encoding: "utf-8" | "base64"): Uint8Array {
  if (encoding === "utf-8") return Buffer.from(content, "utf8");
  const compact = content.replace(/\s+/g, "");
  if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) {
    throw new ActionableError({
      resource: "content",
      code: "InvalidBase64",
      message: "content is not valid base64 (A-Z, a-z, 0-9, +, /, padded with = to a multiple of 4 characters).",
      hint: 'encode the bytes as standard base64, or send text with encoding "utf-8".',
    });
  }
  return Buffer.from(compact, "base64");
}

async function detectType(key: string, encoding: string): Promise<string> {
  const detected = await detectContentType(key, key);
  if (detected !== "application/octet-stream") return detected;
  return encoding === "utf-8" ? "text/plain; charset=utf-8" : detected;
}
