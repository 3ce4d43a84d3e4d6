/**
 * A Parquet file's schema, row groups, rows, compression and stored column
 * statistics, from its footer, and its first rows — by ranged reads only
 * (hyparquet reads the footer from the file's last 512 KiB, and the first
 * rows from the first row group's pages of each column), never the whole
 * file.
 */
import { parquetMetadataAsync, parquetReadObjects, parquetSchema, type AsyncBuffer, type FileMetaData, type SchemaTree } from "hyparquet";
import type { RangeReader } from "./zip.ts";

export interface ParquetSummary {
  format: "parquet";
  rows: number;
  created_by: string | null;
  columns: { name: string; type: string; nullable: boolean; compression: string | null; min?: unknown; max?: unknown; null_count?: number; compressed_bytes: number }[];
  row_groups: { rows: number; compressed_bytes: number }[];
  first_rows: Record<string, unknown>[];
}

/** Reads through `read`, each slice one ranged GET. */
export function rangedFile(size: number, read: RangeReader): AsyncBuffer {
  return {
    byteLength: size,
    slice: async (start, end = size) => {
      const bytes = await read(start, end - start);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
  };
}

const plain = (v: unknown): unknown => (typeof v === "bigint" ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v instanceof Date ? v.toISOString() : v instanceof Uint8Array ? `<${v.length} bytes>` : v);

function typeName(tree: SchemaTree): string {
  const e = tree.element;
  if (tree.children.length > 0) return e.converted_type === "LIST" || e.logical_type?.type === "LIST" ? "list" : e.converted_type === "MAP" ? "map" : "struct";
  const logical = e.logical_type?.type;
  if (logical === "TIMESTAMP" || logical === "DATE" || logical === "DECIMAL" || logical === "STRING" || logical === "UUID" || logical === "JSON") return logical.toLowerCase();
  if (e.converted_type === "UTF8") return "string";
  if (e.converted_type) return e.converted_type.toLowerCase();
  return (e.type ?? "?").toLowerCase();
}

export async function summarizeParquet(file: AsyncBuffer, firstRows: number): Promise<ParquetSummary> {
  const metadata: FileMetaData = await parquetMetadataAsync(file);
  const tree = parquetSchema(metadata);
  const firstGroup = metadata.row_groups[0];
  const columns = tree.children.map((child) => {
    const chunks = metadata.row_groups.map((g) => g.columns.find((c) => c.meta_data?.path_in_schema[0] === child.element.name)?.meta_data);
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
  const rows = firstGroup && firstRows > 0 ? await parquetReadObjects({ file, metadata, rowStart: 0, rowEnd: Math.min(firstRows, Number(metadata.num_rows)) }) : [];
  return {
    format: "parquet",
    rows: Number(metadata.num_rows),
    created_by: metadata.created_by ?? null,
    columns,
    row_groups: metadata.row_groups.slice(0, 100).map((g) => ({ rows: Number(g.num_rows), compressed_bytes: g.columns.reduce((n, c) => n + Number(c.meta_data?.total_compressed_size ?? 0n), 0) })),
    first_rows: rows.map((r) => Object.fromEntries(Object.entries(r as Record<string, unknown>).map(([k, v]) => [k, plain(v)]))),
  };
}
