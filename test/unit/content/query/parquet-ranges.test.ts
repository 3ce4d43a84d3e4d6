/**
 * What makes a Parquet query by columns safe: the columns are read off
 * DuckDB's own plan (projections and filters), and a plan read wrongly costs
 * a second run, never rows — the engine fails on a hole (zeros do not parse
 * as pages) and the files are completed and the query run again.
 */

import { beforeAll, expect, test } from "bun:test";
import {
  closeSync,
  copyFileSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { type Narrowing, runQuery } from "../../../../src/content/query/engine.ts";
import { columnsInPlan } from "../../../../src/content/query/parquet-ranges.ts";
import { objectsView } from "../../../../src/content/query/tables.ts";
import { tempDir } from "../../../helpers/files.ts";

let dir: string;
let full: string;
const LIMITS = { memoryBytes: 96 * 1024 * 1024, threads: 2, spillBytes: 1024 * 1024 * 1024, timeoutMs: 60_000 };
const WINDOW = { offset: 0, maxRows: 100, maxBytes: 1024 * 1024, maxCellChars: 2000 };

beforeAll(async () => {
  dir = tempDir("parquet-ranges");
  full = join(dir, "full.parquet");
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  await duck.run(
    `COPY (SELECT i AS id, md5(i::VARCHAR) AS payload, i % 10 AS small FROM range(100000) t(i)) TO '${full}' (FORMAT parquet, ROW_GROUP_SIZE 20000)`,
  );
});

async function planFor(sql: string): Promise<unknown> {
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  await duck.run(objectsView([{ key: "k.parquet", path: full, format: "parquet" }]));
  return JSON.parse(String((await duck.runAndReadAll(`EXPLAIN (FORMAT json) ${sql}`)).getRows()[0]![1]));
}

test("the columns of a real plan: projected, filtered only, none for a count from the footer, all for *", async () => {
  const names = ["id", "payload", "small"];
  expect([...columnsInPlan(await planFor("SELECT small FROM objects WHERE id > 5"), names)].sort()).toEqual([
    "id",
    "small",
  ]);
  // The filter's column is not among DuckDB's projections here: only the filter text names it.
  expect([...columnsInPlan(await planFor("SELECT count(*) FROM objects WHERE payload LIKE 'ab%'"), names)]).toEqual([
    "payload",
  ]);
  expect([...columnsInPlan(await planFor("SELECT count(*) FROM objects"), names)]).toEqual([]);
  expect([...columnsInPlan(await planFor("SELECT * FROM objects"), names)].sort()).toEqual(names);
  expect(
    [...columnsInPlan(await planFor("SELECT a.small FROM objects a JOIN objects b ON a.id = b.small"), names)].sort(),
  ).toEqual(["id", "small"]);
});

/** The file with only its magic and footer written, the rest a hole (what placeSparseParquet leaves before the plan). */
function footerOnly(path: string): void {
  const bytes = readFileSync(full);
  const footerLength = bytes.readUInt32LE(bytes.length - 8) + 8;
  const fd = openSync(path, "w");
  ftruncateSync(fd, bytes.length);
  writeSync(fd, bytes, 0, 4, 0);
  writeSync(fd, bytes, bytes.length - footerLength, footerLength, bytes.length - footerLength);
  closeSync(fd);
}

function workspace(name: string) {
  const ws = join(dir, name);
  mkdirSync(join(ws, "data"), { recursive: true });
  const path = join(ws, "data", "1.parquet");
  footerOnly(path);
  return {
    ws: { dir: ws, data: join(ws, "data"), remove() {} },
    files: [{ key: "k.parquet", path, format: "parquet" as const }],
    path,
  };
}

test("a plan read wrongly (nothing fetched): the engine fails on the hole, the file is completed, the query runs again with the right rows", async () => {
  const { ws, files, path } = workspace("wrong-plan");
  let completed = 0;
  const narrowing: Narrowing = {
    fromPlan: async () => {},
    completeAll: async () => {
      copyFileSync(full, path);
      completed++;
      return true;
    },
  };
  const page = await runQuery(
    ws,
    files,
    "SELECT small, count(*) AS n, min(payload) AS p FROM objects GROUP BY small ORDER BY small",
    WINDOW,
    LIMITS,
    new AbortController().signal,
    narrowing,
  );
  expect(completed).toBe(1);
  expect(page.rows).toHaveLength(10);
  expect(page.rows[0]).toEqual([0, 10000, expect.any(String)]);
  expect(statSync(path).size).toBe(statSync(full).size);
});

test("and when nothing is left to complete, the failure is the answer: holes never turn into rows", async () => {
  const { ws, files } = workspace("no-rows-from-holes");
  const narrowing: Narrowing = { fromPlan: async () => {}, completeAll: async () => false };
  await expect(
    runQuery(ws, files, "SELECT sum(small) FROM objects", WINDOW, LIMITS, new AbortController().signal, narrowing),
  ).rejects.toThrow();
});
