import { z } from "zod";
import { s3Uri } from "../runtime/errors.ts";
import type { ObjectHead } from "../storage/types.ts";
import { bucketName, objectKey, versionId } from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

export const headObject = defineTool({
  name: "head_object",
  title: "Object metadata",
  description:
    "An object's size, type, ETag, dates, version, storage class, restore, headers, metadata, checksums, encryption, lock.",
  inputSchema: z.object({ bucket_name: bucketName, object_key: objectKey, version_id: versionId.optional() }).strict(),
  outputSchema: z.object({
    bucket: z.string(),
    key: z.string(),
    size: z.number().nullable(),
    content_type: z.string().nullable(),
    etag: z.string().nullable(),
    last_modified: z.string().nullable(),
    version_id: z.string().nullable(),
    storage_class: z.string().nullable(),
    cache_control: z.string().nullable(),
    content_encoding: z.string().nullable(),
    content_disposition: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    checksums: z.record(z.string(), z.string()),
    delete_marker: z.boolean(),
    encryption: z
      .object({ algorithm: z.string(), kms_key_id: z.string().optional(), customer_algorithm: z.string().optional() })
      .nullable()
      .optional(),
    restore: z.object({ in_progress: z.boolean(), expires: z.string().optional() }).nullable().optional(),
    archive_status: z.string().nullable().optional(),
    object_lock: z
      .object({ mode: z.string().optional(), retain_until: z.string().optional(), legal_hold: z.string().optional() })
      .nullable()
      .optional(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  writesToStore: false,
  async handler(args, ctx) {
    const head = await ctx.storage.headObject(
      { bucket: args.bucket_name, key: args.object_key, ...(args.version_id ? { versionId: args.version_id } : {}) },
      ctx.signal,
    );
    const uri = s3Uri(args.bucket_name, args.object_key);
    const text = head.delete_marker
      ? `${uri}${head.version_id ? ` version ${head.version_id}` : ""} is a delete marker: the object is deleted. Older versions may remain (list_object_versions).`
      : `${uri}: ${head.size} bytes, ${head.content_type ?? "unknown type"}, ETag ${head.etag ?? "-"}, modified ${head.last_modified ?? "-"}` +
        `${head.version_id ? `, version ${head.version_id}` : ""}, ${head.storage_class}` +
        `${Object.keys(head.metadata).length ? `, metadata ${JSON.stringify(head.metadata)}` : ""}.` +
        extrasText(head);
    return textOutput(text, { bucket: args.bucket_name, key: args.object_key, ...head });
  },
});

/** What the text adds for encryption, an archived object's restore and object lock, when the store reports them. */
function extrasText(head: ObjectHead): string {
  const lines: string[] = [];
  if (head.encryption)
    lines.push(
      `Encrypted: ${head.encryption.algorithm}${head.encryption.kms_key_id ? ` with KMS key ${head.encryption.kms_key_id}` : ""}.`,
    );
  if (head.archive_status && !head.restore)
    lines.push(`In the ${head.archive_status} archive tier: restore_object makes a readable copy first.`);
  if (head.restore)
    lines.push(
      head.restore.in_progress
        ? "A restore from the archive is under way."
        : `Restored from the archive: a copy is readable until ${head.restore.expires ?? "a date the store did not say"}.`,
    );
  const lock = head.object_lock;
  if (lock?.mode)
    lines.push(
      `Retention ${lock.mode} until ${lock.retain_until ?? "?"}: it cannot be deleted or overwritten before then${lock.mode === "GOVERNANCE" ? " (except with the governance bypass)" : " by anyone"}.`,
    );
  if (lock?.legal_hold === "ON") lines.push("Legal hold ON: it cannot be deleted until the hold is removed.");
  return lines.length ? ` ${lines.join(" ")}` : "";
}
