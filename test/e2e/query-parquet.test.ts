/**
 * query_objects over Parquet reads only what the query's plan needs: the
 * footer, then the chunks of the columns it scans or filters on (counted at a
 * recording proxy in front of Ceph), with the same rows as DuckDB on the whole
 * file; a query that names every column reads the whole file.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { DuckDBInstance } from "@duckdb/node-api";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

let bucket: string;
let client: Client;
let close: () => Promise<void>;
let proxy: ReturnType<typeof startRecordingProxy>;
let size: number;
let local: string;
const KEY = "wide.parquet";
const ROWS = 400_000;

beforeAll(async () => {
  requireBinary();
  bucket = await freshBucket("query-parquet");
  const dir = tempDir("query-parquet");
  local = join(dir, KEY);
  // A wide column of hashes (most of the bytes) beside two narrow ones, in 8 row groups.
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  await duck.run(
    `COPY (SELECT i AS id, md5(i::VARCHAR) || md5((i + 1)::VARCHAR) AS payload, i % 10 AS small FROM range(${ROWS}) t(i)) TO '${local}' (FORMAT parquet, ROW_GROUP_SIZE 50000)`,
  );
  size = statSync(local).size;
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: KEY, Body: readFileSync(local) }));
  proxy = startRecordingProxy(s3().endpoint);
  ({ client, close } = await connectBinary({ env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint } }));
}, 120_000);
afterAll(async () => {
  await close?.();
  proxy?.stop();
});

/** The GETs of the object since `from`. */
const getsSince = (from: number) =>
  proxy.requests.slice(from).filter((q) => q.method === "GET" && q.path.endsWith(`/${KEY}`)).length;

/** The bytes the GETs of the object asked for since `from` (a GET without a range: the whole object). */
const bytesAskedSince = (from: number) =>
  proxy.requests
    .slice(from)
    .filter((q) => q.method === "GET" && q.path.endsWith(`/${KEY}`))
    .reduce((n, q) => {
      const m = /bytes=(\d+)-(\d+)/.exec(q.range ?? "");
      return n + (m ? Number(m[2]) - Number(m[1]) + 1 : size);
    }, 0);

/** The same query by DuckDB over the whole local file. */
async function expected(sql: string): Promise<unknown[][]> {
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  const rows = (await duck.runAndReadAll(sql.replace("FROM objects", `FROM read_parquet('${local}')`))).getRowsJson();
  return rows.map((r) => r.map((v) => (typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v)));
}

/** Runs `sql` over the object, checks its rows against DuckDB's over the whole file; the result and the bytes asked for. */
async function queried(sql: string) {
  const from = proxy.requests.length;
  const r = await call(client, "query_objects", { bucket_name: bucket, keys: [KEY], sql });
  expect(r.isError, textOf(r)).toBeFalsy();
  expect(r.structuredContent!.rows).toEqual(await expected(sql));
  return { r, asked: bytesAskedSince(from) };
}

describe("query_objects over Parquet", () => {
  test("the columns a query scans and filters on are fetched, not the wide one it never names", async () => {
    const { r, asked } = await queried(
      "SELECT small, count(*) AS n FROM objects WHERE id >= 1000 GROUP BY small ORDER BY small",
    );
    // id and small are a few percent of the file; the payload column is the rest.
    expect(asked).toBeLessThan(size * 0.2);
    expect(r.structuredContent!.bytes_read).toBeLessThanOrEqual(asked);
  });

  test("without a WHERE, the columns the text names are fetched as the worker starts: the rows right, the wide column not fetched", async () => {
    const { r, asked } = await queried(
      "SELECT small, count(*) AS n, max(id) AS top FROM objects GROUP BY small ORDER BY small",
    );
    expect(asked).toBeLessThan(size * 0.2);
    expect(r.structuredContent!.bytes_read).toBe(asked);
  });

  test("a filter's column alone (left out of the plan's projections) is fetched too: the rows are right", async () => {
    const { asked } = await queried("SELECT count(*) AS n, sum(small) AS s FROM objects WHERE payload LIKE 'ab%'");
    expect(asked).toBeGreaterThan(size * 0.5);
  });

  test("a count answered from the footer fetches no column; SELECT * fetches them all", async () => {
    let from = proxy.requests.length;
    const count = await call(client, "query_objects", {
      bucket_name: bucket,
      keys: [KEY],
      sql: "SELECT count(*) FROM objects",
    });
    expect(count.structuredContent!.rows).toEqual([[ROWS]]);
    expect(bytesAskedSince(from)).toBeLessThan(256 * 1024);
    // Its first bytes (size and magic), then its tail with the footer: each read once.
    expect(getsSince(from)).toBe(2);
    from = proxy.requests.length;
    // A filter whose bounds every row group meets (small is 0-9 in each): every column of every row group.
    const sql = "SELECT * FROM objects WHERE small = 7 AND id % 50000 = 7 ORDER BY id";
    const all = await call(client, "query_objects", { bucket_name: bucket, keys: [KEY], sql });
    expect(all.structuredContent!.rows).toEqual((await expected(sql)).map((row) => [KEY, ...row]));
    expect(bytesAskedSince(from)).toBeGreaterThan(size * 0.9);
  });

  test("a filter on a sorted column fetches only the row groups its statistics allow: one of eight, the rows right", async () => {
    const sql = "SELECT * FROM objects WHERE id >= 100000 AND id < 100040 ORDER BY id";
    const from = proxy.requests.length;
    const r = await call(client, "query_objects", { bucket_name: bucket, keys: [KEY], sql });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.rows).toEqual((await expected(sql)).map((row) => [KEY, ...row]));
    expect(r.structuredContent!.rows).toHaveLength(40);
    // Every column of one row group (an eighth of the file), and the footer: not the other seven.
    const asked = bytesAskedSince(from);
    expect(asked).toBeGreaterThan(size * 0.1);
    expect(asked).toBeLessThan(size * 0.2);
  });

  test("filters the statistics cannot bound (an OR of two values) fetch the columns in every row group", async () => {
    const sql = "SELECT id, small FROM objects WHERE id = 7 OR id = 390000 ORDER BY id";
    const from = proxy.requests.length;
    const r = await call(client, "query_objects", { bucket_name: bucket, keys: [KEY], sql });
    expect(r.structuredContent!.rows).toEqual(await expected(sql));
    // id and small of all eight row groups: more than one eighth of theirs, none of the payload.
    expect(bytesAskedSince(from)).toBeLessThan(size * 0.2);
  });
});
