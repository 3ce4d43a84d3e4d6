import { z } from "zod";
import { inspectSource, MAX_ENTRIES, SNIFF_BYTES, type Summary } from "../content/inspect.ts";
import { memberSource, objectSource } from "../content/source.ts";
import { s3Uri } from "../runtime/errors.ts";
import { archiveError } from "../tool-kit/archive-member.ts";
import { archiveMember, bucketName, objectKey } from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

/** A compressed archive member is inspected from its first bytes, at most this many. */
const MEMBER_BYTES = 8 * 1024 * 1024;

export const inspectObject = defineTool({
  name: "inspect_object",
  title: "Inspect an object",
  description:
    "What an object holds, reading only the bytes needed: CSV/TSV/JSON columns, first rows, row count; " +
    "Parquet schema and row groups; zip/tar entries; image size.",
  inputSchema: z
    .object({ bucket_name: bucketName, object_key: objectKey, archive_member: archiveMember.optional() })
    .strict(),
  outputSchema: z.object({
    bucket: z.string(),
    key: z.string(),
    archive_member: z.string().optional(),
    size: z.number(),
    content_type: z.string().nullable(),
    last_modified: z.string().nullable(),
    compression: z.string().nullable(),
    format: z.string(),
    summary: z.object({ format: z.string() }).passthrough(),
    requests: z.number(),
    bytes_read: z.number(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  writesToStore: false,
  heldBytes: () => MEMBER_BYTES + 4 * SNIFF_BYTES,
  async handler(args, ctx) {
    const where = s3Uri(args.bucket_name, args.object_key);
    const object = await objectSource(
      ctx.storage,
      { bucket: args.bucket_name, key: args.object_key },
      ctx.signal,
      SNIFF_BYTES,
    );
    let inspected: Awaited<ReturnType<typeof inspectSource>>;
    let size = object.size;
    try {
      const src = args.archive_member ? await memberSource(object, args.archive_member, MEMBER_BYTES) : object;
      size = src.size;
      inspected = await inspectSource(src);
    } catch (err) {
      throw archiveError(err, where, args.archive_member);
    }
    const { compression } = inspected;
    // Text and structured content carry the summary each: half the budget for the structured copy.
    const summary = fitted(inspected.summary, ctx.contentBudget / 2);
    const name = args.archive_member ? `${where}!${args.archive_member}` : where;
    const text = `${name}: ${describe(summary, size, compression)}${"cut_to_fit" in summary ? "\n(Examples cut to fit one answer.)" : ""}\n(${object.counts.requests} request(s), ${object.counts.bytes} bytes read of ${object.size})`;
    return textOutput(text, {
      bucket: args.bucket_name,
      key: args.object_key,
      ...(args.archive_member ? { archive_member: args.archive_member } : {}),
      size,
      content_type: object.meta.content_type,
      last_modified: object.meta.last_modified,
      compression,
      format: summary.format,
      summary: summary as { format: string },
      requests: object.counts.requests,
      bytes_read: object.counts.bytes,
    });
  },
});

/** The examples a summary carries (rows, records, entries, lines), halved from the end until it fits `budget`: the facts stay. */
function fitted(summary: Summary, budget: number): Summary {
  let fit = summary as Summary & Record<string, unknown>;
  while (JSON.stringify(fit).length > budget) {
    const key = (["first_rows", "first_records", "entries", "lines"] as const).find(
      (k) => Array.isArray(fit[k]) && (fit[k] as unknown[]).length > 0,
    );
    if (!key) break;
    const list = fit[key] as unknown[];
    fit = { ...fit, [key]: list.slice(0, Math.floor(list.length / 2)), cut_to_fit: true };
  }
  return fit;
}

const cell = (v: unknown) => {
  const s = typeof v === "string" ? v : (JSON.stringify(v) ?? "");
  return (s.length > 60 ? `${s.slice(0, 60)}…` : s).replace(/\|/g, "\\|").replace(/\n/g, " ");
};
const table = (head: string[], rows: unknown[][]) =>
  [
    `| ${head.map(cell).join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ].join("\n");

function describe(s: Summary, size: number, compression: string | null): string {
  const gz = compression ? `${compression}'d ` : "";
  switch (s.format) {
    case "csv":
    case "tsv":
    case "delimited":
      return `${gz}${s.format.toUpperCase()} (delimiter ${JSON.stringify(s.delimiter)}${s.header ? ", with a header" : ", no header"}), ${s.rows_exact ? "" : "~"}${s.rows} rows, ${s.columns.length} columns: ${s.columns.map((c) => `${c.name} (${c.type}${c.nullable ? ", nullable" : ""})`).join(", ")}.\nFirst rows:\n${table(
        s.columns.map((c) => c.name),
        s.first_rows,
      )}`;
    case "json":
    case "jsonl":
      if (s.top_level)
        return `${gz}JSON: a ${s.top_level.type}${s.top_level.keys ? ` with keys ${s.top_level.keys.join(", ")}` : ""}.`;
      return `${gz}${s.format === "jsonl" ? "JSON Lines" : "a JSON array"}: ${s.records_exact ? "" : "~"}${s.records} records; fields: ${s.fields.map((f) => `${f.name} (${f.types.join("|")})`).join(", ")}.\nFirst records:\n${s.first_records
        .slice(0, 5)
        .map((r) => JSON.stringify(r).slice(0, 300))
        .join("\n")}`;
    case "parquet":
      return `Parquet: ${s.rows} rows in ${s.row_group_count} row group(s)${s.created_by ? `, written by ${s.created_by}` : ""}; columns: ${s.columns.map((c) => `${c.name} (${c.type}${c.compression ? `, ${c.compression}` : ""}${c.min !== undefined ? `, ${cell(c.min)}…${cell(c.max)}` : ""})`).join(", ")}.\n${
        s.first_rows_note
          ? `First rows ${s.first_rows_note}.`
          : `First rows:\n${table(
              s.columns.map((c) => c.name),
              s.first_rows.map((r) => s.columns.map((c) => r[c.name])),
            )}`
      }`;
    case "zip":
    case "tar":
      return `${gz}${s.format} archive, ${s.total_entries ?? "?"} entries${s.listed_all ? "" : ` (the first ${Math.min(s.entries.length, MAX_ENTRIES)} listed)`}:\n${s.entries
        .slice(0, 50)
        .map(
          (e) =>
            `${e.name} (${"size" in e ? e.size : "?"} bytes${"method" in e ? `, ${e.method}` : ""}${e.modified ? `, ${e.modified}` : ""})`,
        )
        .join("\n")}${s.entries.length > 50 ? "\n…" : ""}`;
    case "image":
      return `a ${s.image_format.toUpperCase()} image, ${s.width}×${s.height} pixels, ${size} bytes.`;
    case "text":
      return `${gz}text, ${s.lines_in_sample} line(s) in the part read; first lines:\n${s.lines.slice(0, 10).join("\n")}`;
    case "binary":
      return `binary${s.detected_type ? ` (${s.detected_type})` : ""}, ${size} bytes: no summary for this format.`;
  }
}
