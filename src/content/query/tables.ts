/**
 * How the objects of a query become the table `objects`: each object is one
 * file of the query's private directory, named by its position and its
 * format, read by the engine's reader for that format; the readers' rows are
 * unioned by column name, and `_key` names the object each row came from.
 */

export type TableFormat = "csv" | "json" | "parquet";

/** One object as the engine sees it: a file of the private directory. */
export interface TableFile {
  key: string;
  path: string;
  format: TableFormat;
  /** The format was told from the bytes: the key's extension names none (`.log`, no extension). */
  byContent?: boolean;
  /** A CSV read while it downloads (csv-stream.ts): `path` is a FIFO, this file its first whole lines. */
  head?: string;
}

const BY_EXTENSION: Record<string, TableFormat> = {
  csv: "csv",
  tsv: "csv",
  txt: "csv",
  psv: "csv",
  tab: "csv",
  json: "json",
  jsonl: "json",
  ndjson: "json",
  parquet: "parquet",
  pq: "parquet",
};

/** The format a key's extension names (a `.gz` after it is the compression), if any. */
export function formatOfKey(key: string): TableFormat | undefined {
  const name = key
    .slice(key.lastIndexOf("/") + 1)
    .toLowerCase()
    .replace(/\.gz$/, "");
  const dot = name.lastIndexOf(".");
  return dot < 0 ? undefined : BY_EXTENSION[name.slice(dot + 1)];
}

/** The format the first bytes show (after any gzip: these are the stored bytes, so gzip'd text is told by its name). */
export function formatOfBytes(head: Uint8Array): TableFormat {
  if (head[0] === 0x50 && head[1] === 0x41 && head[2] === 0x52 && head[3] === 0x31) return "parquet";
  const first = new TextDecoder().decode(head.subarray(0, 64)).trimStart()[0];
  return first === "{" || first === "[" ? "json" : "csv";
}

/** A string literal for SQL. */
export const sqlText = (s: string) => `'${s.replaceAll("'", "''")}'`;

const READER: Record<TableFormat, string> = { csv: "read_csv", json: "read_json", parquet: "read_parquet" };
/**
 * The text readers' buffers are sized for a large machine (a gzip'd CSV's 32 MiB, the JSON reader's twice its 16 MiB
 * largest record): two of them would not fit the query's memory limit (engine.ts). 4 MiB still holds DuckDB's longest
 * line (2 MB).
 */
const OPTIONS: Record<TableFormat, string> = {
  csv: ", buffer_size = 4194304",
  json: ", maximum_object_size = 4194304",
  parquet: "",
};

/** The internal column that tells which file a row came from: named so no data's column is likely to meet it. */
const FILE_COLUMN = "__store_mcp_file";

/**
 * The view `objects`: every file through its format's reader, unioned by column name, `_key` first. A streamed CSV
 * (the only file then) is read with `streamOptions`, its dialect and columns as sniffed from its head.
 */
export function objectsView(files: readonly TableFile[], streamOptions?: string): string {
  const streamed = files[0]?.head === undefined ? undefined : files[0];
  if (streamed && streamOptions)
    return `CREATE VIEW objects AS SELECT ${sqlText(streamed.key)} AS _key, * FROM read_csv(${sqlText(streamed.path)}, ${streamOptions}${OPTIONS.csv})`;
  const keys = `[${files.map((f) => sqlText(f.key)).join(", ")}]`;
  // The file's number, after the last separator (Windows paths have backslashes).
  const position = `regexp_extract(${FILE_COLUMN}, '[/\\\\]([0-9]+)\\.[^/\\\\]*$', 1)::INTEGER`;
  const parts = (Object.keys(READER) as TableFormat[]).flatMap((format) => {
    const of = files.filter((f) => f.format === format);
    if (of.length === 0) return [];
    const list = `[${of.map((f) => sqlText(f.path)).join(", ")}]`;
    return [
      `SELECT ${keys}[${position}] AS _key, * EXCLUDE (${FILE_COLUMN}) FROM ${READER[format]}(${list}, filename = ${sqlText(FILE_COLUMN)}, union_by_name = true${OPTIONS[format]})`,
    ];
  });
  return `CREATE VIEW objects AS ${parts.join(" UNION ALL BY NAME ")}`;
}

/** The file name for the object at `position` (1-based: the view's key list is indexed from 1). */
export function fileNameFor(position: number, format: TableFormat, gzip: boolean): string {
  return `${position}.${format === "json" ? "jsonl" : format}${gzip && format !== "parquet" ? ".gz" : ""}`;
}
