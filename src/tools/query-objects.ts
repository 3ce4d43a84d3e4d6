import { z } from "zod";
import { globList, pathFilter } from "../bulk/filters.ts";
import { listAll } from "../bulk/listing.ts";
import {
  MAX_QUERY_BYTES,
  MAX_QUERY_OBJECTS,
  type ReadAs,
  queryObjects as runQuery,
  tooMuch,
  type WantedObject,
} from "../content/query/index.ts";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import { bucketName, objectKey } from "../tool-kit/schemas.ts";
import { defineTool, type ToolContext, textOutput } from "../tool-kit/types.ts";

const DEFAULT_ROWS = 100;
const MAX_ROWS = 10_000;
const MAX_KEYS = 100;
/** A cell's text is cut here: one long value should not take a whole answer. */
const MAX_CELL_CHARS = 2000;

export const queryObjects = defineTool({
  name: "query_objects",
  title: "Query objects with SQL",
  description:
    "Runs one SQL SELECT (DuckDB) over CSV/TSV, JSON Lines and Parquet objects (gzip'd too) as table `objects`, with a `_key` column.",
  inputSchema: z
    .object({
      bucket_name: bucketName,
      keys: z.array(objectKey).max(MAX_KEYS).optional().describe("The objects to query."),
      prefix: z.string().max(1024).optional().describe('Or every object under it ("" = the bucket).'),
      include: globList("prefix").optional(),
      sql: z.string().min(1).max(20_000).describe("One SELECT … FROM objects."),
      max_rows: z.number().int().min(1).max(MAX_ROWS).optional().describe(`Default ${DEFAULT_ROWS}.`),
      continuation_token: z.string().min(1).max(512).optional().describe("From a truncated result."),
    })
    .strict(),
  outputSchema: z.object({
    bucket: z.string(),
    objects: z.number(),
    columns: z.array(z.object({ name: z.string(), type: z.string() })),
    rows: z.array(z.array(z.unknown())),
    rows_total: z.number(),
    first_row: z.number(),
    bytes_read: z.number(),
    read_as: z
      .array(
        z.object({
          key: z.string(),
          format: z.enum(["csv", "json"]),
          delimiter: z.string().optional(),
          header: z.boolean().optional(),
        }),
      )
      .optional(),
    cut_to_fit: z.boolean().optional(),
    cells_cut: z.number().optional(),
    truncated: z.boolean(),
    continuation_token: z.string().optional(),
    next: z.string().optional(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  // prefix "" is the whole bucket, not "no prefix" (which would mean keys are given).
  emptyIsValue: ["prefix"],
  handsBack: true,
  writesToStore: false,
  async handler(given, ctx) {
    // keys: [] and include: [] are a client filling every parameter (strict function calling): not given; beside
    // keys, prefix "" is filler too (as delete_objects reads them).
    const keysGiven = given.keys !== undefined && given.keys.length > 0;
    const args: typeof given = {
      ...given,
      keys: keysGiven ? given.keys : undefined,
      prefix: keysGiven && given.prefix === "" ? undefined : given.prefix,
      include: given.include?.length ? given.include : undefined,
    };
    if ((args.keys === undefined) === (args.prefix === undefined)) {
      throw new ActionableError({
        resource: "keys",
        code: "InvalidParameter",
        message: "Give either keys or prefix (with include), not both and not neither.",
        hint: 'pass keys: ["data/a.csv"] for named objects, or prefix: "data/" with include: ["*.csv"].',
      });
    }
    if (args.keys && args.include) {
      throw new ActionableError({
        resource: "include",
        code: "InvalidParameter",
        message: "include chooses among the objects under a prefix; with keys it has nothing to choose from.",
        hint: "leave include out, or give a prefix instead of keys.",
      });
    }
    const offset = offsetFrom(args.continuation_token, args);
    const objects: WantedObject[] = args.keys
      ? [...new Set(args.keys)].map((key) => ({ key, size: 0, etag: null }))
      : await objectsUnder(ctx, args.bucket_name, args.prefix!, args.include);
    if (objects.length === 0) {
      throw new ActionableError({
        resource: s3Uri(args.bucket_name, args.prefix ?? ""),
        code: "NoObjects",
        message: "No object to query: nothing under the prefix matches include.",
        hint: "list_objects or find_objects shows what is there; widen the prefix or the globs.",
      });
    }
    const maxRows = args.max_rows ?? DEFAULT_ROWS;
    const page = await runQuery({
      storage: ctx.storage,
      bucket: args.bucket_name,
      objects,
      sql: args.sql,
      // The rows go out twice (text and structured content): each copy gets under half the budget.
      window: { offset, maxRows, maxBytes: Math.floor(ctx.contentBudget / 2.5), maxCellChars: MAX_CELL_CHARS },
      signal: ctx.signal,
      ...(ctx.querySpillBytes ? { spillBytes: ctx.querySpillBytes } : {}),
      ...(ctx.share
        ? { owner: { id: ctx.call.owner, job: ctx.call.job, secondsPerHour: ctx.share.querySecondsPerHour } }
        : {}),
      progress: (bytes) =>
        ctx.progress.report(bytes, undefined, `query_objects: ${bytes} bytes fetched`, false, { doneBytes: bytes }),
    });
    const shownTo = offset + page.rows.length;
    const more = shownTo < page.totalRows;
    const token = more ? tokenFor(shownTo, args) : undefined;
    const next = token
      ? `call query_objects again with the same arguments and continuation_token "${token}" for rows from ${shownTo + 1} (add ORDER BY for a stable order across calls).`
      : undefined;
    const text =
      `${page.totalRows} row(s) from ${objects.length} object(s) (${page.bytesRead} bytes read)` +
      (page.rows.length < page.totalRows ? `; rows ${offset + 1}-${shownTo} shown` : "") +
      `:\n${table(
        page.columns.map((c) => c.name),
        page.rows,
      )}` +
      (next ? `\nStopped early${page.cutToFit ? " (the rows fill one answer)" : ""}. Next: ${next}` : "") +
      (page.readAs ? `\n${readAsText(page.readAs)}` : "");
    return textOutput(text, {
      bucket: args.bucket_name,
      objects: objects.length,
      columns: page.columns,
      rows: page.rows,
      rows_total: page.totalRows,
      first_row: offset + 1,
      bytes_read: page.bytesRead,
      read_as: page.readAs,
      ...(page.cutToFit ? { cut_to_fit: true } : {}),
      ...(page.cellsCut ? { cells_cut: page.cellsCut } : {}),
      truncated: more,
      ...(token ? { continuation_token: token, next } : {}),
    });
  },
});

/** Says how objects without a known extension were read, and how to have them read otherwise. */
function readAsText(readAs: readonly ReadAs[]): string {
  const each = readAs.map((r) =>
    r.format === "json"
      ? `${r.key} as JSON Lines`
      : `${r.key} as CSV (delimiter ${JSON.stringify(r.delimiter ?? "?")}, ${r.header === false ? "no header line" : "first line the header"})`,
  );
  return `Read by content (no known extension: .csv, .tsv, .txt, .json, .jsonl, .ndjson, .parquet, optionally .gz): ${each.join("; ")}. If that is wrong, give the object a known extension (copy_object).`;
}

type Args = { bucket_name: string; keys?: string[]; prefix?: string; include?: string[]; sql: string };

async function objectsUnder(
  ctx: ToolContext,
  bucket: string,
  prefix: string,
  include?: string[],
): Promise<WantedObject[]> {
  const wanted = pathFilter(include, undefined);
  const found: WantedObject[] = [];
  let bytes = 0;
  for await (const object of listAll(ctx.storage, bucket, prefix, ctx.signal)) {
    // Empty objects (folder markers among them) hold no rows; read, an empty CSV would add a column of NULLs.
    if (object.size === 0 || !wanted(object.key.slice(prefix.length))) continue;
    if (found.length >= MAX_QUERY_OBJECTS) {
      throw new ActionableError({
        resource: s3Uri(bucket, prefix),
        code: "QueryTooLarge",
        message: `More than ${MAX_QUERY_OBJECTS} objects match; a query reads at most that many.`,
        hint: "narrow the prefix or include, or give keys.",
      });
    }
    bytes += object.size;
    if (bytes > MAX_QUERY_BYTES) throw tooMuch(bucket);
    found.push({ key: object.key, size: object.size, etag: object.etag });
  }
  return found;
}

/** A token with the next row's offset, bound to the query it continues (a token of another query is refused). */
function tokenFor(offset: number, args: Args): string {
  return Buffer.from(`q:${JSON.stringify([offset, fingerprint(args)])}`, "utf8").toString("base64url");
}

function offsetFrom(token: string | undefined, args: Args): number {
  if (token === undefined) return 0;
  const text = Buffer.from(token, "base64url").toString("utf8");
  try {
    const [offset, print] = JSON.parse(text.slice(2)) as [unknown, unknown];
    if (text.startsWith("q:") && Number.isSafeInteger(offset) && (offset as number) >= 0 && print === fingerprint(args))
      return offset as number;
  } catch {}
  throw new ActionableError({
    resource: "continuation_token",
    code: "InvalidParameter",
    message: "This continuation_token was not made by query_objects for this query.",
    hint: "pass the continuation_token of the previous result with the same bucket_name, keys or prefix, include and sql, or leave it out to start over.",
  });
}

function fingerprint(args: Args): string {
  const what = JSON.stringify([
    args.bucket_name,
    args.keys ?? null,
    args.prefix ?? null,
    args.include ?? null,
    args.sql,
  ]);
  return new Bun.CryptoHasher("sha256").update(what).digest("base64url").slice(0, 16);
}

/** The rows as a plain text table: a header, then a line a row, cells separated by " | ". */
function table(names: string[], rows: unknown[][]): string {
  const cell = (v: unknown) =>
    v === null ? "NULL" : typeof v === "string" ? v.replaceAll("\n", "\\n") : JSON.stringify(v);
  return [names.join(" | "), ...rows.map((r) => r.map(cell).join(" | "))].join("\n");
}
