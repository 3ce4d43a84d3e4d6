/** query_objects' table: formats told by name and bytes, and the view's text with keys quoted as SQL strings. */
import { expect, test } from "bun:test";
import { fileNameFor, formatOfBytes, formatOfKey, objectsView } from "../../../../src/content/query/tables.ts";

test("an object's format: its extension (before .gz), else its first bytes", () => {
  expect(
    [
      "a.csv",
      "dir/b.TSV",
      "c.csv.gz",
      "d.txt",
      "e.jsonl.gz",
      "f.ndjson",
      "g.json",
      "h.parquet",
      "i.log",
      "noext",
      "dir.parquet/x",
    ].map(formatOfKey),
  ).toEqual(["csv", "csv", "csv", "csv", "json", "json", "json", "parquet", undefined, undefined, undefined]);
  const bytes = (s: string) => new TextEncoder().encode(s);
  expect(formatOfBytes(bytes("PAR1\x15\x00"))).toBe("parquet");
  expect(formatOfBytes(bytes('  \n{"a":1}'))).toBe("json");
  expect(formatOfBytes(bytes("[1,2]"))).toBe("json");
  expect(formatOfBytes(bytes("a,b\n1,2\n"))).toBe("csv");
  expect([fileNameFor(3, "csv", true), fileNameFor(4, "json", false), fileNameFor(5, "parquet", true)]).toEqual([
    "3.csv.gz",
    "4.jsonl",
    "5.parquet",
  ]);
});

test("the view: one reader per format, unioned by name, each key a quoted SQL string", () => {
  const view = objectsView([
    { key: "a'b.csv", path: "/q/data/1.csv", format: "csv" },
    { key: "c.parquet", path: "/q/data/2.parquet", format: "parquet" },
    { key: "d.csv", path: "/q/data/3.csv.gz", format: "csv" },
  ]);
  expect(view).toStartWith("CREATE VIEW objects AS SELECT ['a''b.csv', 'c.parquet', 'd.csv'][");
  expect(view).toContain("read_csv(['/q/data/1.csv', '/q/data/3.csv.gz']");
  expect(view).toContain("read_parquet(['/q/data/2.parquet']");
  expect(view.split(" UNION ALL BY NAME ")).toHaveLength(2);
  expect(view).not.toContain("read_json");
});
