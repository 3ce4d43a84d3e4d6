/** A query's result read into the window the caller asked for, its values made JSON's. */
import type { Duck, QueryPage, Result, RowWindow } from "./engine-types.ts";

const WIDE_INTEGERS = new Set([5, 9, 16, 32]);
const DECIMAL = 19;

/** Rows from `offset` while they fit, then only counted: the whole result is read once. */
export async function readWindow(
  duck: Duck,
  result: Result,
  typeIds: number[],
  w: RowWindow,
): Promise<Omit<QueryPage, "columns">> {
  const rows: unknown[][] = [];
  let total = 0;
  let bytes = 0;
  let cutToFit = false;
  let cellsCut = 0;
  let full = false;
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const count = chunk.rowCount;
    for (let i = Math.max(0, w.offset - total); i < count && !full; i++) {
      const row = chunk.convertRowValues(i, duck.JsonDuckDBValueConverter).map((v, c) => {
        const value = plain(v, typeIds[c]!);
        if (typeof value === "string" && value.length > w.maxCellChars)
          return (cellsCut++, `${value.slice(0, w.maxCellChars)}…`);
        return value;
      });
      const size = JSON.stringify(row).length + 1;
      if (rows.length >= w.maxRows || bytes + size > w.maxBytes) {
        full = true;
        cutToFit = rows.length < w.maxRows;
        break;
      }
      bytes += size;
      rows.push(row);
    }
    total += count;
  }
  return { rows, totalRows: total, cutToFit, cellsCut };
}

/** JSON has no 64-bit integers or decimals: a value it can hold exactly is a number, else it stays the engine's text. */
function plain(v: unknown, typeId: number): unknown {
  if (typeof v !== "string") return v;
  if (WIDE_INTEGERS.has(typeId)) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : v;
  }
  if (typeId === DECIMAL) {
    const n = Number(v);
    const digits = v.includes(".") ? v.replace(/0+$/, "").replace(/\.$/, "") : v;
    return String(n) === digits.replace(/^(-?)0+(?=\d)/, "$1") ? n : v;
  }
  return v;
}
