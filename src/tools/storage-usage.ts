import { z } from "zod";
import { listAll } from "../bulk/listing.ts";
import {
  continuationToken,
  DEFAULT_KEYS_SCANNED,
  keyFromToken,
  maxKeysScanned,
  scanEnd,
  tokenAfter,
} from "../bulk/scan.ts";
import { humanBytes, topSums, Usage } from "../bulk/usage.ts";
import { s3Uri } from "../runtime/errors.ts";
import { bucketName } from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

/** Groups listed in a result (by bytes); the totals cover the rest. */
const GROUPS_LISTED = 100;
/** Incomplete uploads listed, and whose parts are counted (one ListParts each). */
const UPLOADS_LISTED = 1000;
const UPLOADS_SIZED = 100;

const sum = { objects: z.number(), bytes: z.number() };
const object = z.object({ key: z.string(), size: z.number(), last_modified: z.string().nullable() });

export const storageUsage = defineTool({
  name: "storage_usage",
  title: "Storage usage",
  description:
    "Sums a bucket or prefix: objects and bytes, per folder (depth 1-3) and storage class; largest, oldest, newest; " +
    "incomplete uploads.",
  inputSchema: z
    .object({
      bucket_name: bucketName,
      prefix: z.string().max(1024).optional().describe('e.g. "teams/".'),
      depth: z.number().int().min(1).max(3).optional().describe("Default 1."),
      top: z.number().int().min(1).max(100).optional().describe("Default 10."),
      max_keys_scanned: maxKeysScanned.optional(),
      continuation_token: continuationToken.optional(),
    })
    .strict(),
  outputSchema: z.object({
    bucket: z.string(),
    prefix: z.string(),
    ...sum,
    groups: z.array(z.object({ group: z.string(), ...sum })),
    group_count: z.number(),
    storage_classes: z.array(z.object({ storage_class: z.string(), ...sum })),
    largest: z.array(object),
    oldest: object.nullable(),
    newest: object.nullable(),
    incomplete_uploads: z.object({
      count: z.number(),
      bytes: z.number(),
      bytes_of: z.number(),
      more: z.boolean(),
      oldest: z.string().nullable(),
    }),
    ...scanEnd,
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  handsBack: true,
  writesToStore: false,
  async handler(args, ctx) {
    const prefix = args.prefix ?? "";
    const usage = new Usage(prefix, args.depth ?? 1, args.top ?? 10);
    const maxScanned = args.max_keys_scanned ?? DEFAULT_KEYS_SCANNED;
    let last: string | undefined;
    let truncated = false;
    for await (const o of listAll(
      ctx.storage,
      args.bucket_name,
      prefix,
      ctx.signal,
      keyFromToken(args.continuation_token),
    )) {
      if (usage.total.objects >= maxScanned) {
        truncated = true;
        break;
      }
      usage.add(o);
      last = o.key;
      if (usage.total.objects % 10_000 === 0)
        ctx.progress.report(
          usage.total.objects,
          undefined,
          `storage_usage: ${usage.total.objects.toLocaleString("en-US")} keys, ${humanBytes(usage.total.bytes)}`,
        );
    }
    // Incomplete uploads are counted once, on the first call of a scan.
    const incomplete = args.continuation_token
      ? { uploads: [], more: false }
      : await ctx.storage.listIncompleteUploads(args.bucket_name, prefix, UPLOADS_LISTED, UPLOADS_SIZED, ctx.signal);
    const uploads = {
      count: incomplete.uploads.length,
      bytes: incomplete.uploads.reduce((n, u) => n + (u.bytes ?? 0), 0),
      bytes_of: incomplete.uploads.filter((u) => u.bytes !== null).length,
      more: incomplete.more,
      oldest:
        incomplete.uploads
          .map((u) => u.initiated)
          .filter((d): d is string => d !== null)
          .sort()[0] ?? null,
    };
    const token = truncated && last !== undefined ? tokenAfter(last) : undefined;
    const next = token
      ? `call storage_usage again with the same arguments and continuation_token "${token}" for the keys after these (add the sums up).`
      : undefined;
    const pick = (o: { key: string; size: number; last_modified: string | null }) => ({
      key: o.key,
      size: o.size,
      last_modified: o.last_modified,
    });
    const groups = topSums(usage.groups, GROUPS_LISTED, "group") as { group: string; objects: number; bytes: number }[];
    const classes = topSums(usage.classes, 50, "storage_class") as {
      storage_class: string;
      objects: number;
      bytes: number;
    }[];
    const structured = {
      bucket: args.bucket_name,
      prefix,
      ...usage.total,
      groups,
      group_count: usage.groups.size,
      storage_classes: classes,
      largest: usage.largest.map(pick),
      oldest: usage.oldest ? pick(usage.oldest) : null,
      newest: usage.newest ? pick(usage.newest) : null,
      incomplete_uploads: uploads,
      keys_scanned: usage.total.objects,
      truncated,
      ...(token ? { continuation_token: token, next } : {}),
    };
    const where = s3Uri(args.bucket_name, prefix);
    const text =
      `${where}: ${usage.total.objects.toLocaleString("en-US")} object(s), ${humanBytes(usage.total.bytes)}` +
      (groups.length
        ? `. By folder: ${groups
            .slice(0, 10)
            .map((g) => `${g.group || "(top)"} ${humanBytes(g.bytes)} in ${g.objects}`)
            .join("; ")}${groups.length > 10 ? "; …" : ""}`
        : "") +
      (classes.length > 1
        ? `. By storage class: ${classes.map((c) => `${c.storage_class} ${humanBytes(c.bytes)}`).join(", ")}`
        : "") +
      (uploads.count
        ? `. ${uploads.count}${uploads.more ? "+" : ""} incomplete multipart upload(s) hold ${humanBytes(uploads.bytes)} (billed, invisible in listings; oldest ${uploads.oldest})`
        : "") +
      (next ? `. Stopped at ${maxScanned.toLocaleString("en-US")} keys. Next: ${next}` : ".");
    return textOutput(text, structured);
  },
});
