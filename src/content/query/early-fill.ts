/**
 * The columns a query's text names, fetched from its Parquet objects as soon
 * as their footers are read: while the worker starts and plans, not after it
 * (the plan's own fill then fetches only what this missed: fillColumns skips
 * what is written). Never for a query with a WHERE anywhere in its text: the
 * plan's filters may rule out row groups by their statistics (row-groups.ts),
 * and nothing is fetched early that they would have skipped. Only while the
 * guess is small (EARLY_MAX_BYTES for all the objects), so what a wrong guess
 * costs stays bounded. The guess is a superset where it can be: a name
 * anywhere in the text counts, and a `*` (other than count(*)) means every
 * column.
 */
import { bytesToFill, fillColumns, type SparseParquet } from "./parquet-ranges.ts";

export const EARLY_MAX_BYTES = 32 * 1024 * 1024;

/** The columns among `names` that `sql` may read: those it names, or every one when it selects `*`. */
export function columnsNamedIn(sql: string, names: readonly string[]): Set<string> | "all" {
  const text = sql.toLowerCase().replace(/count\s*\(\s*\*\s*\)/g, "count()");
  if (text.includes("*")) return "all";
  const named = new Set<string>();
  for (const name of names.map((n) => n.toLowerCase())) {
    const at = (from: number) => text.indexOf(name, from);
    for (let i = at(0); i >= 0; i = at(i + 1)) {
      const before = text[i - 1];
      const after = text[i + name.length];
      if (!isWordChar(before) && !isWordChar(after)) {
        named.add(name);
        break;
      }
    }
  }
  return named;
}

const isWordChar = (c: string | undefined) => c !== undefined && /[a-z0-9_$]/.test(c);

/**
 * Starts fetching what `sql` names from each of `sparse` when, all together, it is at most EARLY_MAX_BYTES; `fetched`
 * hears the bytes. Never rejects: what it could not fetch, the plan's fill fetches.
 */
export async function fillEarly(
  sparse: readonly SparseParquet[],
  sql: string,
  signal: AbortSignal,
  fetched: (bytes: number) => void,
): Promise<void> {
  if (sparse.length === 0 || /\bwhere\b/i.test(sql)) return;
  const guesses = sparse.map((s) => ({ s, columns: columnsNamedIn(sql, [...s.columns.keys()]) }));
  const bytes = guesses.reduce((sum, { s, columns }) => sum + bytesToFill(s, columns), 0);
  if (bytes === 0 || bytes > EARLY_MAX_BYTES) return;
  await Promise.all(
    guesses.map(({ s, columns }) =>
      fillColumns(s, columns, signal).then(fetched, () => {
        // Left to the plan's fill (a cancel or a failed read: that fill meets it again, and says so).
      }),
    ),
  );
}
