/**
 * A Parquet file's schema, row groups, rows, compression and stored column
 * statistics, from its footer, and its first rows — by ranged reads only
 * (hyparquet reads the footer from the file's last 512 KiB, and the first
 * rows from the first row group's pages of each column), never the whole
 * file.
 */
import {
  type AsyncBuffer,
  type FileMetaData,
  parquetMetadataAsync,
  parquetReadObjects,
  parquetSchema,
  type SchemaTree,
} from "hyparquet";
import type { RangeReader } from "./zip.ts";

export interface ParquetSummary {
  format: "parquet";
  rows: number;
  created_by: string | null;
  columns: {
    name: string;
    type: string;
    nullable: boolean;
    compression: string | null;
    min?: unknown;
    max?: unknown;
    null_count?: number;
    compressed_bytes: number;
  }[];
  row_group_count: number;
  /** The first 100. */
  row_groups: { rows: number; compressed_bytes: number }[];
  first_rows: Record<string, unknown>[];
  /** Why first_rows is empty when the file has rows. */
  first_rows_note?: string;
}

/**
 * The most one read of a Parquet file takes here: a footer that says it is larger (its length is the file's own
 * claim, up to 4 GiB) is refused before anything is fetched or allocated, and a footer's every element becomes an
 * object in memory, so a crafted one is bounded by this too. Real footers of thousands of row groups fit.
 */
export const MAX_PARQUET_READ = 8 * 1024 * 1024;

export class ParquetTooLarge extends Error {}

/** Reads through `read`, each slice one ranged GET of at most MAX_PARQUET_READ bytes. */
export function rangedFile(size: number, read: RangeReader): AsyncBuffer {
  return {
    byteLength: size,
    slice: async (start, end = size) => {
      if (end - start > MAX_PARQUET_READ)
        throw new ParquetTooLarge(
          `its footer (or a page) says it is ${end - start} bytes, more than the ${MAX_PARQUET_READ / 1024 / 1024} MiB read here at once`,
        );
      const bytes = await read(start, end - start);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
  };
}

const plain = (v: unknown): unknown =>
  typeof v === "bigint"
    ? Number.isSafeInteger(Number(v))
      ? Number(v)
      : v.toString()
    : v instanceof Date
      ? v.toISOString()
      : v instanceof Uint8Array
        ? `<${v.length} bytes>`
        : v;

function typeName(tree: SchemaTree): string {
  const e = tree.element;
  if (tree.children.length > 0)
    return e.converted_type === "LIST" || e.logical_type?.type === "LIST"
      ? "list"
      : e.converted_type === "MAP"
        ? "map"
        : "struct";
  const logical = e.logical_type?.type;
  if (
    logical === "TIMESTAMP" ||
    logical === "DATE" ||
    logical === "DECIMAL" ||
    logical === "STRING" ||
    logical === "UUID" ||
    logical === "JSON"
  )
    return logical.toLowerCase();
  if (e.converted_type === "UTF8") return "string";
  // INT_64, UINT_8…: int64, uint8.
  if (e.converted_type) return e.converted_type.toLowerCase().replace(/^(u?int)_/, "$1");
  return (e.type ?? "?").toLowerCase();
}

/** The first rows' bytes, shared by the columns: each column chunk is read only this far (its first pages). */
const FIRST_ROWS_BYTES = 1536 * 1024;

/**
 * The first rows, from the first pages of each column of the first row group: hyparquet reads a column chunk's byte
 * range whole, so the range is cut to the column's share of FIRST_ROWS_BYTES (it stops parsing once it has the rows).
 * A first page larger than that share: no rows (an empty list), rather than the whole row group.
 */
async function firstRowsOf(file: AsyncBuffer, metadata: FileMetaData, n: number): Promise<unknown[]> {
  const group = metadata.row_groups[0]!;
  const share = BigInt(Math.max(64 * 1024, Math.floor(FIRST_ROWS_BYTES / Math.max(group.columns.length, 1))));
  const cut: FileMetaData = {
    ...metadata,
    row_groups: [
      {
        ...group,
        columns: group.columns.map((c) =>
          c.meta_data && c.meta_data.total_compressed_size > share
            ? { ...c, meta_data: { ...c.meta_data, total_compressed_size: share } }
            : c,
        ),
      },
    ],
  };
  try {
    return await parquetReadObjects({ file, metadata: cut, rowStart: 0, rowEnd: n });
  } catch {
    return [];
  }
}

export async function summarizeParquet(file: AsyncBuffer, firstRows: number): Promise<ParquetSummary> {
  // The footer's usual size; a larger one costs a second read (hyparquet's default, 512 KiB, reads more than most need).
  const metadata: FileMetaData = await parquetMetadataAsync(file, { initialFetchSize: 64 * 1024 });
  const tree = parquetSchema(metadata);
  const firstGroup = metadata.row_groups[0];
  const columns = tree.children.map((child) => {
    const chunks = metadata.row_groups.map(
      (g) => g.columns.find((c) => c.meta_data?.path_in_schema[0] === child.element.name)?.meta_data,
    );
    const stats = chunks.length === 1 ? chunks[0]?.statistics : undefined;
    const min = stats?.min_value ?? stats?.min;
    const max = stats?.max_value ?? stats?.max;
    return {
      name: child.element.name,
      type: typeName(child),
      nullable: child.element.repetition_type !== "REQUIRED",
      compression: chunks[0]?.codec ?? null,
      ...(min !== undefined ? { min: plain(min) } : {}),
      ...(max !== undefined ? { max: plain(max) } : {}),
      ...(stats?.null_count !== undefined ? { null_count: Number(stats.null_count) } : {}),
      compressed_bytes: chunks.reduce((n, c) => n + Number(c?.total_compressed_size ?? 0n), 0),
    };
  });
  const rows =
    firstGroup && firstRows > 0
      ? await firstRowsOf(file, metadata, Math.min(firstRows, Number(firstGroup.num_rows)))
      : [];
  return {
    format: "parquet",
    rows: Number(metadata.num_rows),
    created_by: metadata.created_by ?? null,
    columns,
    row_group_count: metadata.row_groups.length,
    row_groups: metadata.row_groups.slice(0, 100).map((g) => ({
      rows: Number(g.num_rows),
      compressed_bytes: g.columns.reduce((n, c) => n + Number(c.meta_data?.total_compressed_size ?? 0n), 0),
    })),
    first_rows: rows.map((r) =>
      Object.fromEntries(Object.entries(r as Record<string, unknown>).map(([k, v]) => [k, plain(v)])),
    ),
    ...(rows.length === 0 && Number(metadata.num_rows) > 0
      ? {
          first_rows_note: `not read: a column's first page is larger than its share of ${FIRST_ROWS_BYTES / 1024} KiB (some writers put a whole row group's column in one page); query_objects with LIMIT ${firstRows} reads them`,
        }
      : {}),
  };
}
