/**
 * Which filters of a real plan bound a row group, and which row groups their
 * statistics rule out: only comparisons every row must meet, and only what
 * the bounds prove.
 */
import { beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { boundable } from "../../../../src/content/query/parquet-ranges.ts";
import { type Bounds, comparisonsInPlan, mayMatch } from "../../../../src/content/query/row-groups.ts";
import { objectsView } from "../../../../src/content/query/tables.ts";
import { tempDir } from "../../../helpers/files.ts";

let file: string;
beforeAll(async () => {
  file = join(tempDir("row-groups"), "t.parquet");
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  await duck.run(
    `COPY (SELECT i AS id, 'k' || i AS name, TIMESTAMP '2024-01-01' + INTERVAL (i) SECOND AS ts, i / 3.0 AS third FROM range(1000) t(i)) TO '${file}' (FORMAT parquet)`,
  );
});

async function comparisons(where: string) {
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  await duck.run(objectsView([{ key: "t.parquet", path: file, format: "parquet" }]));
  const plan = JSON.parse(
    String((await duck.runAndReadAll(`EXPLAIN (FORMAT json) SELECT * FROM objects WHERE ${where}`)).getRows()[0]![1]),
  );
  return comparisonsInPlan(plan);
}

test("a real plan's comparisons: numbers, strings and times that every row must meet", async () => {
  expect(await comparisons("id >= 100 AND id < 200")).toEqual([
    { column: "id", op: ">=", value: 100n },
    { column: "id", op: "<", value: 200n },
  ]);
  expect(await comparisons("name = 'k5'")).toEqual([{ column: "name", op: "=", value: "k5" }]);
  expect(await comparisons("ts > TIMESTAMP '2024-01-01 00:10:00'")).toEqual([
    { column: "ts", op: ">", value: new Date("2024-01-01T00:10:00Z") },
  ]);
});

test("what need not hold for every row, or is not read here, bounds nothing", async () => {
  expect(await comparisons("id = 5 OR id = 900")).toEqual([]);
  expect(await comparisons("id % 7 = 3")).toEqual([]);
  expect(await comparisons("name LIKE '%5'")).toEqual([]);
  // A string that holds " AND id=5 " is one value, not a second filter.
  expect(await comparisons("name = 'k1 AND id=5 AND y'")).toEqual([
    { column: "name", op: "=", value: "k1 AND id=5 AND y" },
  ]);
  // A plan with no Parquet scan, or two (a self-join whose sides filter differently).
  expect(comparisonsInPlan({ name: "SEQ_SCAN", children: [] })).toEqual([]);
  const scan = (filters: string) => ({ name: "READ_PARQUET", extra_info: { Filters: filters } });
  expect(comparisonsInPlan({ name: "HASH_JOIN", children: [scan("id>5"), scan("id<3")] })).toEqual([]);
});

test("a row group is ruled out only when its bounds prove no row can match", () => {
  const ids = new Map<string, Bounds>([["id", { min: 100n, max: 199n }]]);
  const may = (op: ">=" | "<" | "<=" | ">" | "=", value: bigint | number) =>
    mayMatch([{ column: "id", op, value }], ids);
  expect([may("=", 99n), may("=", 100n), may("=", 199n), may("=", 200n)]).toEqual([false, true, true, false]);
  expect([may("<", 100n), may("<", 101n), may("<=", 100n), may("<=", 99n)]).toEqual([false, true, true, false]);
  expect([may(">", 199n), may(">", 198n), may(">=", 199n), may(">=", 200n)]).toEqual([false, true, true, false]);
  expect([may("=", 150.5), may(">", 199.5)]).toEqual([true, false]);
  // Strings by their bytes (as Parquet orders them); a value of another type, or a column without bounds, proves nothing.
  const names = new Map<string, Bounds>([["name", { min: "k1", max: "k3" }]]);
  expect(mayMatch([{ column: "name", op: "=", value: "k4" }], names)).toBe(false);
  expect(mayMatch([{ column: "name", op: "=", value: "k2" }], names)).toBe(true);
  expect(mayMatch([{ column: "name", op: "=", value: 5n }], names)).toBe(true);
  expect(mayMatch([{ column: "other", op: "=", value: 5n }], names)).toBe(true);
  // Times a millisecond wider (statistics in microseconds arrive as milliseconds).
  const times = new Map<string, Bounds>([
    ["ts", { min: new Date("2024-01-01T00:00:00Z"), max: new Date("2024-01-01T01:00:00Z") }],
  ]);
  expect(mayMatch([{ column: "ts", op: ">", value: new Date("2024-01-01T01:00:00Z") }], times)).toBe(true);
  expect(mayMatch([{ column: "ts", op: ">", value: new Date("2024-01-01T01:00:01Z") }], times)).toBe(false);
  // A number past 2^53 is not compared as a float.
  const big = new Map<string, Bounds>([["id", { min: 2n ** 60n, max: 2n ** 60n + 10n }]]);
  expect(mayMatch([{ column: "id", op: "<", value: 5.5 }], big)).toBe(true);
  expect(mayMatch([{ column: "id", op: "<", value: 5n }], big)).toBe(false);
});

test("only columns whose statistics compare as the plan's literals read are bounded", () => {
  const el = (e: Record<string, unknown>) => ({ name: "c", ...e }) as never;
  expect(boundable(el({ type: "INT64" }))).toBe(true);
  expect(boundable(el({ type: "INT32", converted_type: "INT_16" }))).toBe(true);
  expect(boundable(el({ type: "DOUBLE" }))).toBe(true);
  expect(boundable(el({ type: "BYTE_ARRAY", converted_type: "UTF8" }))).toBe(true);
  expect(boundable(el({ type: "INT64", logical_type: { type: "TIMESTAMP", isAdjustedToUTC: false } }))).toBe(true);
  // Unscaled decimals, unsigned integers, zoned times, dates, raw bytes and groups are not.
  expect(boundable(el({ type: "INT64", converted_type: "DECIMAL", logical_type: { type: "DECIMAL" } }))).toBe(false);
  expect(boundable(el({ type: "INT64", converted_type: "UINT_64" }))).toBe(false);
  expect(boundable(el({ type: "INT32", logical_type: { type: "INTEGER", isSigned: false } }))).toBe(false);
  expect(boundable(el({ type: "INT64", logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true } }))).toBe(false);
  expect(boundable(el({ type: "INT32", converted_type: "DATE" }))).toBe(false);
  expect(boundable(el({ type: "BYTE_ARRAY" }))).toBe(false);
  expect(boundable(el({ num_children: 2 }))).toBe(false);
});
