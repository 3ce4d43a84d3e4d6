/**
 * A Parquet object fetched by the columns a query needs. The engine reads
 * only local files, so the object becomes a sparse file of its full size in
 * the query's directory: its footer first (where the schema and every column
 * chunk's place are), then, once the engine's plan names the columns it will
 * scan and filter on, those columns' chunks (with their page indexes and
 * bloom filters) in every row group the plan's filters may match (by its
 * statistics: row-groups.ts). The rest of the file stays a hole. If
 * the engine reads a hole after all (a plan read wrongly), the pages there do
 * not parse and the query fails: then the whole file is completed and the
 * query run again (engine.ts), so a narrowed read can cost time, never rows.
 */
import { type FileHandle, open } from "node:fs/promises";
import { type FileMetaData, parquetMetadataAsync, parquetSchema, type SchemaElement } from "hyparquet";
import { releaseChunks } from "../../runtime/memory.ts";
import type { Storage } from "../../storage/index.ts";
import { rangedFile } from "../formats/parquet.ts";
import { type ObjectSource, objectSource } from "../source.ts";
import { type Bounds, type Comparison, mayMatch } from "./row-groups.ts";

type Range = [start: number, end: number];

/** Ranges closer than this are read as one (a request costs more than the bytes between). */
const MERGE_GAP = 256 * 1024;
/** One ranged GET reads at most this much. */
const SLICE = 2 * 1024 * 1024;
/**
 * Ranged GETs in flight: as many as IN_FLIGHT_BYTES holds, within these bounds. Column chunks are often far smaller
 * than a slice (one per row group and column), and each costs the store's answer time whatever its size: small ones
 * go many at once, large ones fewer, the memory they hold bounded either way.
 */
const MIN_AT_ONCE = 4;
const MAX_AT_ONCE = 32;
const IN_FLIGHT_BYTES = 16 * 1024 * 1024;

export interface SparseParquet {
  key: string;
  path: string;
  size: number;
  /** Top-level column (lower case) → the byte ranges its reads can touch; undefined ranges: not known, so the whole file. */
  columns: Map<string, Range[] | undefined>;
  /** Each row group's share of those ranges, and its columns' least and greatest values where the file gives them. */
  groups: RowGroup[];
  /** Ranges written so far (the footer and the magic first). */
  written: Range[];
  source: ObjectSource;
}

const num = (v: bigint | number | undefined) => (v === undefined ? undefined : Number(v));

interface RowGroup {
  ranges: Map<string, Range[]>;
  bounds: Map<string, Bounds>;
}

/** Each top-level column's ranges (its chunks in every row group, their page indexes and bloom filters), whole and by row group. */
function columnRanges(meta: FileMetaData): Pick<SparseParquet, "columns" | "groups"> {
  const out = new Map<string, Range[] | undefined>();
  const children = parquetSchema(meta).children;
  for (const name of children.map((c) => c.element.name.toLowerCase())) out.set(name, []);
  const bounded = new Set(children.filter((c) => boundable(c.element)).map((c) => c.element.name.toLowerCase()));
  const groups: RowGroup[] = [];
  const unknown = () => ({ columns: new Map([...out.keys()].map((k) => [k, undefined])), groups: [] });
  for (const group of meta.row_groups) {
    const mine: RowGroup = { ranges: new Map(), bounds: new Map() };
    groups.push(mine);
    for (const chunk of group.columns) {
      const m = chunk.meta_data;
      const name = m?.path_in_schema[0]?.toLowerCase();
      if (!m || name === undefined || !out.has(name)) return unknown();
      const ranges = out.get(name);
      if (!ranges) continue;
      const own = mine.ranges.get(name) ?? [];
      mine.ranges.set(name, own);
      const stats = m.statistics;
      if (bounded.has(name) && stats?.min_value !== undefined && stats.max_value !== undefined)
        mine.bounds.set(name, { min: stats.min_value, max: stats.max_value });
      const start = Math.min(num(m.dictionary_page_offset) ?? Infinity, num(m.data_page_offset)!);
      ranges.push([start, start + Number(m.total_compressed_size)]);
      own.push([start, start + Number(m.total_compressed_size)]);
      const extra: [bigint | undefined, number | undefined][] = [
        [chunk.column_index_offset, chunk.column_index_length],
        [chunk.offset_index_offset, chunk.offset_index_length],
        [m.bloom_filter_offset, m.bloom_filter_length],
      ];
      for (const [at, length] of extra) {
        if (at === undefined) continue;
        // A bloom filter without its length (older writers) has no known end: this column is read whole.
        if (length === undefined) out.set(name, undefined);
        else {
          ranges.push([Number(at), Number(at) + length]);
          own.push([Number(at), Number(at) + length]);
        }
      }
    }
  }
  return { columns: out, groups };
}

/**
 * Whether a top-level column's statistics compare as the plan's literals read (row-groups.ts): signed integers and
 * floating point, UTF-8 strings (ordered by their bytes), and times without a zone. Not decimals (whose statistics are
 * unscaled), unsigned integers, dates or anything nested.
 */
export function boundable(element: SchemaElement): boolean {
  if (element.num_children) return false;
  const logical = element.logical_type as { type?: string; isAdjustedToUTC?: boolean; isSigned?: boolean } | undefined;
  switch (element.type) {
    case "INT32":
    case "INT64":
      if (logical?.type === "TIMESTAMP") return element.type === "INT64" && logical.isAdjustedToUTC === false;
      return (
        (element.converted_type === undefined || /^INT_(8|16|32|64)$/.test(element.converted_type)) &&
        (logical === undefined || (logical.type === "INTEGER" && logical.isSigned !== false))
      );
    case "FLOAT":
    case "DOUBLE":
      return element.converted_type === undefined && logical === undefined;
    case "BYTE_ARRAY":
      return element.converted_type === "UTF8" || logical?.type === "STRING";
    default:
      return false;
  }
}

/** The object as a sparse file holding its footer, or undefined when it is not Parquet after all (then it is fetched whole). */
export async function placeSparseParquet(
  storage: Storage,
  bucket: string,
  key: string,
  path: string,
  signal: AbortSignal,
): Promise<SparseParquet | undefined> {
  const source = await objectSource(storage, { bucket, key }, signal, 4);
  const head = await source.read(0, 4);
  if (source.size < 12 || String.fromCharCode(...head) !== "PAR1") return undefined;
  // What hyparquet reads for the footer (its last 64 KiB, more for a larger footer) is written from here, not fetched again.
  const tail: [number, Uint8Array][] = [];
  const keep = async (offset: number, length: number) => {
    const bytes = await source.read(offset, length);
    tail.push([offset, bytes]);
    return bytes;
  };
  let meta;
  try {
    meta = await parquetMetadataAsync(rangedFile(source.size, keep), { initialFetchSize: 64 * 1024 });
  } catch (err) {
    // A footer too large (or too odd) to read here: the object is fetched whole, and the engine, in its worker, reads it.
    if (signal.aborted) throw err;
    return undefined;
  }
  const footer: Range = [source.size - meta.metadata_length - 8, source.size];
  const sparse: SparseParquet = { key, path, size: source.size, ...columnRanges(meta), written: [], source };
  const handle = await open(path, "wx+", 0o600);
  try {
    await handle.truncate(source.size);
    await handle.write(head, 0, 4, 0);
    for (const [offset, bytes] of tail) await handle.write(bytes, 0, bytes.length, offset);
    sparse.written = merged([[0, 4], ...tail.map(([offset, bytes]): Range => [offset, offset + bytes.length])], 0);
    const missing = subtract([footer], sparse.written);
    if (missing.length > 0) await copyRanges(handle, sparse, missing, signal);
  } finally {
    await handle.close();
  }
  return sparse;
}

/**
 * Writes the ranges the columns need (all of the file with "all") that are not written yet, in the row groups that
 * may hold rows meeting `comparisons`; the bytes it read.
 */
export async function fillColumns(
  sparse: SparseParquet,
  columns: Iterable<string> | "all",
  signal: AbortSignal,
  comparisons: readonly Comparison[] = [],
): Promise<number> {
  const missing = missingRanges(sparse, columns, comparisons);
  if (missing.length === 0) return 0;
  const handle = await open(sparse.path, "r+");
  try {
    return await copyRanges(handle, sparse, merged(missing, MERGE_GAP), signal);
  } finally {
    await handle.close();
  }
}

/** What fillColumns would fetch: the columns' ranges in the row groups `comparisons` may match, not written yet. */
function missingRanges(
  sparse: SparseParquet,
  columns: Iterable<string> | "all",
  comparisons: readonly Comparison[],
): Range[] {
  const names = columns === "all" ? [] : [...columns].map((n) => n.toLowerCase());
  if (columns === "all" || names.some((n) => sparse.columns.get(n) === undefined))
    return subtract([[0, sparse.size]], sparse.written);
  const wanted: Range[] = [];
  for (const group of sparse.groups)
    if (mayMatch(comparisons, group.bounds)) for (const n of names) wanted.push(...(group.ranges.get(n) ?? []));
  return subtract(merged(wanted, 0), sparse.written);
}

/** Bytes fillColumns would fetch for `columns` in every row group. */
export const bytesToFill = (sparse: SparseParquet, columns: Iterable<string> | "all") =>
  missingRanges(sparse, columns, []).reduce((sum, [s, e]) => sum + e - s, 0);

/** Whether every byte of the file is written. */
export const isComplete = (sparse: SparseParquet) => subtract([[0, sparse.size]], sparse.written).length === 0;

async function copyRanges(
  handle: FileHandle,
  sparse: SparseParquet,
  ranges: Range[],
  signal: AbortSignal,
): Promise<number> {
  const slices: Range[] = ranges.flatMap(([s, e]) =>
    Array.from(
      { length: Math.ceil((e - s) / SLICE) },
      (_, i) => [s + i * SLICE, Math.min(e, s + (i + 1) * SLICE)] as Range,
    ),
  );
  let bytes = 0;
  let next = 0;
  const worker = async () => {
    while (next < slices.length) {
      signal.throwIfAborted();
      const [s, e] = slices[next++]!;
      const got = await sparse.source.read(s, e - s);
      if (got.length !== e - s)
        throw new Error(`${sparse.key}: ${got.length} bytes where ${e - s} were asked for at ${s}`);
      await handle.write(got, 0, got.length, s);
      bytes += got.length;
      // Written, a fetched slice is garbage: freed now, not at the next collection (a fill runs up to 32 at once).
      if (sparse.source.owned(got)) releaseChunks([got]);
    }
  };
  const average = slices.reduce((sum, [s, e]) => sum + e - s, 0) / Math.max(1, slices.length);
  const atOnce = Math.max(MIN_AT_ONCE, Math.min(MAX_AT_ONCE, Math.floor(IN_FLIGHT_BYTES / average)));
  await Promise.all(Array.from({ length: Math.min(atOnce, slices.length) }, worker));
  sparse.written = merged([...sparse.written, ...ranges], 0);
  return bytes;
}

/** Sorted, with ranges closer than `gap` joined. */
function merged(ranges: Range[], gap: number): Range[] {
  const out: Range[] = [];
  for (const [s, e] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const last = out.at(-1);
    if (last && s <= last[1] + gap) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** `ranges` without the parts in `have` (both sorted and disjoint after merged()). */
function subtract(ranges: Range[], have: Range[]): Range[] {
  const out: Range[] = [];
  for (const [s0, e] of ranges) {
    let s = s0;
    for (const [hs, he] of merged(have, 0)) {
      if (he <= s || hs >= e) continue;
      if (hs > s) out.push([s, hs]);
      s = Math.max(s, he);
    }
    if (s < e) out.push([s, e]);
  }
  return out;
}

/** The columns a plan's Parquet scans project or filter on, among `names`; every column when a scan names one it does not know. */
export function columnsInPlan(plan: unknown, names: readonly string[]): Set<string> {
  const lower = names.map((n) => n.toLowerCase());
  const wanted = new Set<string>();
  const visit = (node: { name?: string; extra_info?: Record<string, unknown>; children?: unknown[] }) => {
    const info = node.extra_info ?? {};
    if (
      String(info.Function ?? node.name ?? "")
        .toUpperCase()
        .includes("PARQUET")
    ) {
      const listed = (v: unknown): string[] =>
        Array.isArray(v) ? v.map(String) : typeof v === "string" && v !== "" ? v.split("\n") : [];
      for (const p of listed(info.Projections).map((p) => p.trim().toLowerCase())) {
        if (p === "" || p.startsWith("__store_mcp_file")) continue;
        if (lower.includes(p)) wanted.add(p);
        else for (const n of lower) wanted.add(n);
      }
      // A filter's column may be left out of the projections: any name its text holds is taken (a superset is safe).
      const filters = listed(info.Filters).join("\n").toLowerCase();
      for (const n of lower) if (filters.includes(n)) wanted.add(n);
    }
    for (const child of node.children ?? []) visit(child as typeof node);
  };
  for (const root of Array.isArray(plan) ? plan : [plan]) visit(root as never);
  return wanted;
}
