import { z } from "zod";
import { s3Uri } from "../runtime/errors.ts";
import { bucketName, contentType, headerValue, objectKey, versionId } from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

export const DEFAULT_EXPIRY = 3600;
/** SigV4's limit: 7 days. */
export const MAX_EXPIRY = 604_800;

export const presignUrl = defineTool({
  name: "presign_url",
  title: "Share a link",
  description: `A URL anyone can use without credentials until it expires (at most ${MAX_EXPIRY / 86_400} days): GET downloads, PUT uploads.`,
  inputSchema: z
    .object({
      bucket_name: bucketName,
      object_key: objectKey,
      method: z.enum(["GET", "PUT"]).optional().describe("Default GET."),
      expires_in: z
        .number()
        .int()
        .min(1)
        .max(MAX_EXPIRY)
        .optional()
        .describe(`Seconds valid, default ${DEFAULT_EXPIRY}.`),
      version_id: versionId.optional(),
      content_type: contentType.optional().describe("PUT: Content-Type the uploader must send."),
      response_content_disposition: headerValue("response_content_disposition")
        .optional()
        .describe('GET: e.g. "attachment; filename=a.pdf".'),
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
    exposes: z
      .object({ access_key_id: z.string(), session_token: z.boolean(), secret_key: z.literal(false) })
      .describe("What the URL itself carries, as SigV4 requires."),
    warning: z.string().optional(),
  }),
  // A PUT link lets whoever holds it replace the object: rated for that worst case.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "read",
  writesToStore: false,
  writes: (args) => args.method === "PUT",
  remoteNote:
    "On this remote server this is how the user moves whole objects: a GET link to download, a PUT link to upload from their own machine.",
  async handler(args, ctx) {
    const method = args.method ?? "GET";
    const expiresIn = args.expires_in ?? DEFAULT_EXPIRY;
    const { url, headers } = await ctx.storage.presign({
      bucket: args.bucket_name,
      key: args.object_key,
      method,
      expiresIn,
      ...(method === "GET" && args.version_id ? { versionId: args.version_id } : {}),
      ...(method === "PUT" && args.content_type ? { contentType: args.content_type } : {}),
      ...(method === "GET" && args.response_content_disposition
        ? { responseContentDisposition: args.response_content_disposition }
        : {}),
    });
    const expiresAt = new Date(Date.now() + expiresIn * 1000).toISOString();
    const how =
      method === "PUT"
        ? `upload with an HTTP PUT of the bytes${headers["Content-Type"] ? ` and the header Content-Type: ${headers["Content-Type"]}` : ""}`
        : "download with an HTTP GET";
    const exposes = exposedBy(url);
    const carries = `The URL carries the access key id ${exposes.access_key_id}${exposes.session_token ? " and the session token of temporary credentials" : ""} (as every presigned URL must), never the secret key.`;
    const warning = exposes.session_token
      ? undefined
      : "signed with a long-lived access key: the link is limited only by expires_in, and whoever holds it learns that key's id. For links you share, prefer temporary credentials (a role, SSO) or a key limited to this bucket.";
    return textOutput(
      `${method} link for ${s3Uri(args.bucket_name, args.object_key)}, valid until ${expiresAt} (${expiresIn} s): ${url}\nAnyone holding this URL can ${how} until then; share it only with whom it is meant for. ${carries}${warning ? `\nWarning: ${warning}` : ""}`,
      {
        url,
        method,
        bucket: args.bucket_name,
        key: args.object_key,
        expires_in: expiresIn,
        expires_at: expiresAt,
        headers,
        exposes,
        warning,
      },
    );
  },
});

/** What a SigV4 presigned URL discloses: the key id in X-Amz-Credential, a session token when the credentials are temporary. */
function exposedBy(url: string): { access_key_id: string; session_token: boolean; secret_key: false } {
  const query = new URL(url).searchParams;
  return {
    access_key_id: (query.get("X-Amz-Credential") ?? "").split("/")[0] ?? "",
    session_token: query.has("X-Amz-Security-Token"),
    secret_key: false,
  };
}
