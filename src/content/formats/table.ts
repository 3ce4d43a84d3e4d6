/**
 * What a delimited text file (CSV, TSV…) or JSON holds, from its first bytes:
 * the delimiter (the one that splits the sample's lines into the same number
 * of fields), whether the first line is a header, each column's type as the
 * sample's values show it, the first rows, and the rows in all — exact when
 * the whole file was read, else estimated from the sample's bytes per row.
 */
export type ColumnType = "integer" | "number" | "boolean" | "date" | "timestamp" | "string" | "null";

export interface Column {
  name: string;
  type: ColumnType;
  nullable: boolean;
}

export interface TableSummary {
  format: "csv" | "tsv" | "delimited";
  delimiter: string;
  header: boolean;
  columns: Column[];
  first_rows: string[][];
  rows: number;
  rows_exact: boolean;
}

const CANDIDATES = [",", "\t", ";", "|"];
export const FIRST_ROWS = 10;

/** Splits one line of delimited text into fields (RFC 4180 quotes: "a, b" and "" inside quotes). */
export function splitLine(line: string, delimiter: string): string[] {
  if (!line.includes('"')) return line.split(delimiter);
  const out: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === delimiter) out.push(field), (field = "");
    else field += c;
  }
  out.push(field);
  return out;
}

const typeOf = (v: string): ColumnType => {
  const s = v.trim();
  if (s === "" || /^(null|NULL|NA|N\/A|\\N)$/.test(s)) return "null";
  if (/^[+-]?\d{1,18}$/.test(s)) return "integer";
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return "number";
  if (/^(true|false|TRUE|FALSE|True|False)$/.test(s)) return "boolean";
  if (/^\d{4}-\d{2}-\d{2}$/.test(s)) return "date";
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(s)) return "timestamp";
  return "string";
};

/** The narrowest type that holds both. */
export function widen(a: ColumnType, b: ColumnType): ColumnType {
  if (a === b || b === "null") return a;
  if (a === "null") return b;
  if ((a === "integer" && b === "number") || (a === "number" && b === "integer")) return "number";
  if ((a === "date" && b === "timestamp") || (a === "timestamp" && b === "date")) return "timestamp";
  return "string";
}

/** `sample`: the file's first bytes as text; `whole`: whether that is all of it; `size`: the file's bytes. */
export function summarizeDelimited(sample: string, whole: boolean, size: number, hint?: string): TableSummary {
  const all = sample.split(/\r?\n/);
  // The last line of a cut sample may be cut too.
  if (!whole || all.at(-1) === "") all.pop();
  const lines = all.filter((l) => l.length > 0);
  const probe = lines.slice(0, 50);
  const delimiter = hint ?? bestDelimiter(probe);
  const rows = lines.map((l) => splitLine(l, delimiter));
  const first = rows[0] ?? [];
  const body = rows.slice(1);
  const bodyTypes = columnTypes(body, first.length);
  // A header: its fields are all text while some column below is not, or it repeats no value and looks like names.
  const header =
    first.length > 0 &&
    first.every((f) => typeOf(f) === "string") &&
    (bodyTypes.some((t) => t !== "string" && t !== "null") || new Set(first).size === first.length);
  const data = header ? body : rows;
  const types = header ? bodyTypes : columnTypes(rows, first.length);
  const nulls = Array.from({ length: first.length }, (_, i) => data.some((r) => typeOf(r[i] ?? "") === "null"));
  const columns = Array.from({ length: first.length }, (_, i) => ({
    name: header ? first[i]! : `column${i + 1}`,
    type: types[i] ?? "string",
    nullable: nulls[i]!,
  }));
  const sampledBytes = new TextEncoder().encode(lines.join("\n")).length + lines.length;
  const count = whole ? data.length : Math.round((size / Math.max(sampledBytes, 1)) * lines.length) - (header ? 1 : 0);
  return {
    format: delimiter === "," ? "csv" : delimiter === "\t" ? "tsv" : "delimited",
    delimiter,
    header,
    columns,
    first_rows: data.slice(0, FIRST_ROWS),
    rows: Math.max(count, 0),
    rows_exact: whole,
  };
}

function columnTypes(rows: string[][], width: number): ColumnType[] {
  const types: ColumnType[] = Array(width).fill("null");
  for (const r of rows.slice(0, 1000)) for (let i = 0; i < width; i++) types[i] = widen(types[i]!, typeOf(r[i] ?? ""));
  return types.map((t) => (t === "null" ? "string" : t));
}

function bestDelimiter(lines: string[]): string {
  let best = ",";
  let bestScore = -1;
  for (const d of CANDIDATES) {
    const counts = lines.map((l) => splitLine(l, d).length);
    if (counts.length === 0 || counts[0]! < 2) continue;
    const same = counts.filter((c) => c === counts[0]).length / counts.length;
    const score = same * 100 + Math.min(counts[0]!, 50);
    if (score > bestScore) (best = d), (bestScore = score);
  }
  return best;
}

export interface JsonSummary {
  format: "json" | "jsonl";
  /** For an array or JSON Lines: the records (objects) seen and their fields' types. */
  fields: { name: string; types: string[] }[];
  first_records: unknown[];
  records: number | null;
  records_exact: boolean;
  /** For a JSON document that is not a list of records: its top-level type and keys. */
  top_level?: { type: string; keys?: string[] };
}

const jsonType = (v: unknown) =>
  v === null
    ? "null"
    : Array.isArray(v)
      ? "array"
      : typeof v === "number"
        ? Number.isInteger(v)
          ? "integer"
          : "number"
        : typeof v;

function fieldsOf(records: unknown[]): JsonSummary["fields"] {
  const seen = new Map<string, Set<string>>();
  for (const r of records.slice(0, 1000)) {
    if (r === null || typeof r !== "object" || Array.isArray(r)) continue;
    for (const [k, v] of Object.entries(r)) {
      const types = seen.get(k) ?? new Set<string>();
      types.add(jsonType(v));
      seen.set(k, types);
    }
  }
  return [...seen].map(([name, types]) => ({ name, types: [...types].sort() }));
}

/** JSON Lines: one value per line. Undefined when the sample's lines are not that. */
export function summarizeJsonLines(sample: string, whole: boolean, size: number): JsonSummary | undefined {
  const lines = sample.split("\n");
  if (!whole) lines.pop();
  const nonEmpty = lines.filter((l) => l.trim());
  const records: unknown[] = [];
  for (const l of nonEmpty.slice(0, 1000)) {
    try {
      records.push(JSON.parse(l));
    } catch {
      return undefined;
    }
  }
  if (records.length < 1 || (records.length === 1 && !whole)) return undefined;
  const sampled = new TextEncoder().encode(sample).length;
  return {
    format: "jsonl",
    fields: fieldsOf(records),
    first_records: records.slice(0, FIRST_ROWS),
    records: whole ? nonEmpty.length : Math.round((size / Math.max(sampled, 1)) * nonEmpty.length),
    records_exact: whole,
  };
}

/** A whole JSON document. */
export function summarizeJson(value: unknown): JsonSummary {
  if (Array.isArray(value))
    return {
      format: "json",
      fields: fieldsOf(value),
      first_records: value.slice(0, FIRST_ROWS),
      records: value.length,
      records_exact: true,
    };
  const keys = value !== null && typeof value === "object" ? Object.keys(value) : undefined;
  return {
    format: "json",
    fields: [],
    first_records: [],
    records: null,
    records_exact: true,
    top_level: { type: jsonType(value), ...(keys ? { keys: keys.slice(0, 100) } : {}) },
  };
}
