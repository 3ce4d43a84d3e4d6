import { z } from "zod";
import { bucketName } from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";
import { MAX_KEYS } from "./list-objects.ts";

export const listObjectVersions = defineTool({
  name: "list_object_versions",
  title: "List object versions",
  description: `Lists versions and delete markers under prefix, newest first per key.`,
  inputSchema: z
    .object({
      bucket_name: bucketName,
      prefix: z.string().max(1024).optional().describe("Only keys starting with this (or one whole key)."),
      max_keys: z.number().int().min(1).max(MAX_KEYS).optional().describe(`Default ${MAX_KEYS}.`),
      key_marker: z.string().min(1).max(1024).optional().describe("From the previous page."),
      version_id_marker: z.string().min(1).max(1024).optional().describe("From the previous page."),
    })
    .strict(),
  outputSchema: z.object({
    bucket: z.string(),
    prefix: z.string().nullable(),
    versions: z.array(
      z.object({
        key: z.string(),
        version_id: z.string().nullable(),
        is_latest: z.boolean(),
        is_delete_marker: z.boolean(),
        size: z.number().nullable(),
        last_modified: z.string().nullable(),
        etag: z.string().nullable(),
      }),
    ),
    is_truncated: z.boolean(),
    next_key_marker: z.string().nullable(),
    next_version_id_marker: z.string().nullable(),
    next: z.string().optional().describe("The next call, when there is more."),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  writesToStore: false,
  async handler(args, ctx) {
    const page = await ctx.storage.listObjectVersions(
      {
        bucket: args.bucket_name,
        maxKeys: args.max_keys ?? MAX_KEYS,
        prefix: args.prefix,
        keyMarker: args.key_marker,
        versionIdMarker: args.version_id_marker,
      },
      ctx.signal,
    );
    const next = page.is_truncated
      ? `call list_object_versions again with key_marker "${page.next_key_marker}" and version_id_marker "${page.next_version_id_marker}".`
      : undefined;
    const lines = [
      `${page.versions.length} version(s) in s3://${args.bucket_name}/${args.prefix ?? ""}:`,
      ...page.versions.map(
        (v) =>
          `${v.key}\t${v.version_id ?? "null"}\t${v.is_delete_marker ? "DELETE MARKER" : `${v.size} B`}\t${v.last_modified ?? "-"}${v.is_latest ? "\tlatest" : ""}`,
      ),
      next ? `More follow: ${next}` : "End of listing.",
    ];
    return textOutput(lines.join("\n"), {
      bucket: args.bucket_name,
      prefix: args.prefix ?? null,
      ...page,
      next,
    });
  },
});
