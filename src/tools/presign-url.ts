import { z } from "zod";
import { s3Uri } from "../errors.ts";
import { bucketName, contentType, headerValue, objectKey, versionId } from "./schemas.ts";
import { defineTool, textOutput } from "./types.ts";

export const DEFAULT_EXPIRY = 3600;
/** SigV4's limit: 7 days. */
export const MAX_EXPIRY = 604_800;

export const presignUrl = defineTool({
  name: "presign_url",
  title: "Share a link",
  description:
    "A presigned URL anyone can use without credentials until it expires: GET downloads, PUT uploads to the key. " +
    `expires_in: default ${DEFAULT_EXPIRY} s, at most ${MAX_EXPIRY} (7 days).`,
  inputSchema: z
    .object({
      bucket_name: bucketName,
      object_key: objectKey,
      method: z.enum(["GET", "PUT"]).optional().describe('"GET" (default) to download, "PUT" to upload.'),
      expires_in: z.number().int().min(1).max(MAX_EXPIRY).optional().describe(`Seconds valid, default ${DEFAULT_EXPIRY}.`),
      version_id: versionId.optional(),
      content_type: contentType.optional().describe("PUT: Content-Type the uploader must send."),
      response_content_disposition: headerValue("response_content_disposition").optional().describe('GET: e.g. "attachment; filename=a.pdf".'),
    })
    .strict(),
  outputSchema: z.object({
    url: z.string(),
    method: z.enum(["GET", "PUT"]),
    bucket: z.string(),
    key: z.string(),
    expires_in: z.number(),
    expires_at: z.string(),
    headers: z.record(z.string(), z.string()),
  }),
  // A PUT link lets whoever holds it replace the object: rated for that worst case.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "read",
  writesToStore: false,
  writes: (args) => args.method === "PUT",
  remoteNote: "On this remote server this is how the user moves whole objects: a GET link to download, a PUT link to upload from their own machine.",
  async handler(args, ctx) {
    ctx.checkBucket(args.bucket_name);
    const method = args.method ?? "GET";
    const expiresIn = args.expires_in ?? DEFAULT_EXPIRY;
    const { url, headers } = await ctx.storage.presign({
      bucket: args.bucket_name,
      key: args.object_key,
      method,
      expiresIn,
      ...(method === "GET" && args.version_id ? { versionId: args.version_id } : {}),
      ...(method === "PUT" && args.content_type ? { contentType: args.content_type } : {}),
      ...(method === "GET" && args.response_content_disposition ? { responseContentDisposition: args.response_content_disposition } : {}),
    });
    const expiresAt = new Date(Date.now() + expiresIn * 1000).toISOString();
    const how = method === "PUT" ? `upload with an HTTP PUT of the bytes${headers["Content-Type"] ? ` and the header Content-Type: ${headers["Content-Type"]}` : ""}` : "download with an HTTP GET";
    return textOutput(
      `${method} link for ${s3Uri(args.bucket_name, args.object_key)}, valid until ${expiresAt} (${expiresIn} s): ${url}\nAnyone holding this URL can ${how} until then; share it only with whom it is meant for.`,
      { url, method, bucket: args.bucket_name, key: args.object_key, expires_in: expiresIn, expires_at: expiresAt, headers },
    );
  },
});
