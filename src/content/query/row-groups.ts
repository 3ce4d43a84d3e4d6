/**
 * Which row groups of a Parquet object a query can skip, from the plan's
 * filters and each row group's statistics (its column's least and greatest
 * values), so that a selective query over a sorted column fetches a few row
 * groups instead of every one. Only what can be proven is skipped: a
 * comparison of a plain column with a number, a string or a timestamp, among
 * filters that must all hold (not an OR, not an optional filter), against
 * statistics that bound the values. The engine skips the same row groups by
 * the same statistics; should it read one after all, it meets a hole and the
 * file is completed and the query run again (parquet-ranges.ts), so a
 * skipped row group can cost time, never rows.
 */

export type Op = "=" | "<" | "<=" | ">" | ">=";

/** One filter of a scan: `column op value`. */
export interface Comparison {
  column: string;
  op: Op;
  value: number | bigint | string | Date;
}

/** A column chunk's statistics, as hyparquet gives them. */
export interface Bounds {
  min: unknown;
  max: unknown;
}

/** A column, an operator, then a number, a string, or a string cast to TIMESTAMP (a time without a zone). */
const COMPARISON = /^([a-z_][a-z0-9_]*)(<=|>=|=|<|>)(-?\d+(?:\.\d+)?|'(?:[^']|'')*'(?:::TIMESTAMP)?)$/i;
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)$/;

/** The comparisons every row must meet, from the Parquet scans of a plan (EXPLAIN's JSON); none where any scan has none. */
export function comparisonsInPlan(plan: unknown): Comparison[] {
  const scans: Comparison[][] = [];
  const visit = (node: { name?: string; extra_info?: Record<string, unknown>; children?: unknown[] }) => {
    const info = node.extra_info ?? {};
    const what = String(info.Function ?? node.name ?? "").toUpperCase();
    if (what.includes("PARQUET")) scans.push(comparisonsOf(info.Filters));
    for (const child of node.children ?? []) visit(child as typeof node);
  };
  for (const root of Array.isArray(plan) ? plan : [plan]) visit(root as never);
  // Every Parquet object is in one scan (tables.ts); two scans (a self-join): only what both demand holds for every read.
  if (scans.length !== 1) return [];
  return scans[0]!;
}

function comparisonsOf(filters: unknown): Comparison[] {
  const lines = Array.isArray(filters) ? filters.map(String) : typeof filters === "string" ? filters.split("\n") : [];
  const out: Comparison[] = [];
  for (const line of lines) {
    const text = line.trim();
    // An optional filter need not hold; an OR or a parenthesised group is not read here.
    if (text === "" || text.startsWith("optional:") || /\bOR\b|\(/i.test(text)) continue;
    for (const part of outsideQuotes(text, " AND ")) {
      const found = COMPARISON.exec(part.trim());
      const value = found ? literal(found[3]!) : undefined;
      if (found && value !== undefined) out.push({ column: found[1]!.toLowerCase(), op: found[2] as Op, value });
    }
  }
  return out;
}

/** `text` cut at each `separator` (any case) that is not inside a quoted string. */
function outsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "'") quoted = !quoted;
    else if (!quoted && text.slice(i, i + separator.length).toUpperCase() === separator) {
      parts.push(text.slice(from, i));
      from = i + separator.length;
      i = from - 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

function literal(text: string): Comparison["value"] | undefined {
  if (!text.startsWith("'")) return /^-?\d+$/.test(text) ? BigInt(text) : Number(text);
  const cast = text.endsWith("::TIMESTAMP") || text.endsWith("::timestamp");
  const body = text.slice(1, cast ? -"'::TIMESTAMP".length : -1).replaceAll("''", "'");
  if (!cast) return body;
  const at = TIMESTAMP.exec(body);
  if (!at) return undefined;
  const time = Date.parse(`${at[1]}T${at[2]!.slice(0, 12)}Z`);
  return Number.isNaN(time) ? undefined : new Date(time);
}

/** Whether a row group with these bounds (by lower-case column) may hold a row meeting every comparison. */
export function mayMatch(comparisons: readonly Comparison[], bounds: ReadonlyMap<string, Bounds>): boolean {
  for (const c of comparisons) {
    const b = bounds.get(c.column);
    if (!b) continue;
    const lo = order(b.min, c.value, -1);
    const hi = order(b.max, c.value, 1);
    if (lo === undefined || hi === undefined) continue;
    // lo: min against the value; hi: max against it (each -1, 0 or 1).
    const excluded =
      (c.op === "=" && (lo > 0 || hi < 0)) ||
      (c.op === "<" && lo >= 0) ||
      (c.op === "<=" && lo > 0) ||
      (c.op === ">" && hi <= 0) ||
      (c.op === ">=" && hi < 0);
    if (excluded) return false;
  }
  return true;
}

/**
 * A bound against a value: -1, 0 or 1, or undefined when they do not compare (other types; a number past 2^53).
 * `widen` moves a time bound out by a millisecond (-1 for a least value, 1 for a greatest): statistics in
 * microseconds arrive as milliseconds.
 */
function order(bound: unknown, value: Comparison["value"], widen: -1 | 1): number | undefined {
  if (typeof value === "string")
    return typeof bound === "string" ? Math.sign(Buffer.compare(Buffer.from(bound), Buffer.from(value))) : undefined;
  if (value instanceof Date) {
    if (!(bound instanceof Date) || Number.isNaN(bound.getTime())) return undefined;
    return Math.sign(bound.getTime() + widen - value.getTime());
  }
  if (typeof bound === "bigint") {
    if (typeof value === "bigint") return bound < value ? -1 : bound > value ? 1 : 0;
    return Number.isSafeInteger(Number(bound)) && Number.isFinite(value) ? Math.sign(Number(bound) - value) : undefined;
  }
  if (typeof bound === "number" && Number.isFinite(bound)) {
    const v = Number(value);
    if (typeof value === "bigint" && !Number.isSafeInteger(v)) return undefined;
    return Number.isFinite(v) ? Math.sign(bound - v) : undefined;
  }
  return undefined;
}
