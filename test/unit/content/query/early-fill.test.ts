/**
 * The columns a query's text names, guessed before its plan exists: a
 * superset where it can be (any mention counts, `*` is every column), never
 * a column the text does not hold.
 */
import { expect, test } from "bun:test";
import { columnsNamedIn } from "../../../../src/content/query/early-fill.ts";

const NAMES = ["ts", "status", "ms", "bytes", "path", "Status Code"];

test("the columns named, as words, in any case; not a name inside another word", () => {
  expect(
    columnsNamedIn("SELECT STATUS, count(*) AS n, avg(ms) FROM objects GROUP BY status ORDER BY status", NAMES),
  ).toEqual(new Set(["status", "ms"]));
  // 'bytes' inside max_bytes is not the column; 'ts' inside 'status' neither.
  expect(columnsNamedIn("SELECT max(bytes_out) AS max_bytes FROM objects", NAMES)).toEqual(new Set());
  // A quoted name with a space: found whole, and its first word as a column too (a superset is safe).
  expect(columnsNamedIn('SELECT "path", "Status Code" FROM objects', NAMES)).toEqual(
    new Set(["path", "status", "status code"]),
  );
});

test("count(*) names no column; any other * is every column", () => {
  expect(columnsNamedIn("SELECT count(*) FROM objects", NAMES)).toEqual(new Set());
  expect(columnsNamedIn("SELECT COUNT ( * ) FROM objects", NAMES)).toEqual(new Set());
  expect(columnsNamedIn("SELECT * FROM objects", NAMES)).toBe("all");
  expect(columnsNamedIn("SELECT o.* FROM objects o", NAMES)).toBe("all");
  expect(columnsNamedIn("SELECT ms * 2 FROM objects", NAMES)).toBe("all");
});
