/**
 * query_objects over one large CSV from a far store reads it while it
 * downloads: the engine reads a FIFO that the server feeds as the object's
 * bytes arrive (seen here by the worker holding the FIFO open while the
 * download's file is still `.part`, through the WAN model with a narrow
 * window; from a near store it reads the whole file as before, a speed
 * choice the look bench shows).
 * Every answer is the one DuckDB gives over the whole file: a row past the
 * head that the head's types do not fit, and a column with no value in the
 * head, are answered over the whole file; a LIMIT, a query that never reads
 * the table, and a store that fails mid-object leave nothing behind, and a
 * failed download never yields rows from a prefix.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { DuckDBInstance } from "@duckdb/node-api";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startWanProxy, type WanProxy } from "../../scripts/bench/wan-proxy.ts";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

let bucket: string;
let client: Client;
let close: () => Promise<void>;
let proxy: FaultProxy;
let wan: WanProxy;
let local: string;
let tmp: string;
const ROWS = 800_000;

/** Writes `select` as a CSV with a header (DuckDB) and puts it at `key`; its local path. */
async function putCsv(key: string, select: string): Promise<string> {
  const path = join(local, key);
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  await duck.run(`COPY (${select}) TO '${path}' (HEADER)`);
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: readFileSync(path) }));
  return path;
}

beforeAll(async () => {
  requireBinary();
  bucket = await freshBucket("query-csv-stream");
  local = tempDir("query-csv-stream");
  tmp = tempDir("query-csv-stream-tmp");
  // ~24 MB each: past the size a CSV is streamed from (16 MiB), its head (4 MiB) about a sixth of it.
  await putCsv(
    "plain.csv",
    `SELECT i AS id, i % 7 AS grp, i * 37 % 1000 AS v, 'row-' || i AS label FROM range(${ROWS}) t(i)`,
  );
  // Wide rows (~300 bytes): the 4 MiB head holds ~14,000 of them, the engine's sniffer samples 20,480 over the whole
  // file. Numbers in the head, a word at row 16,000: the whole file's sample sees it (text), the head's does not.
  await putCsv(
    "widens.csv",
    `SELECT i AS id, CASE WHEN i = 16000 THEN 'n/a' ELSE i::VARCHAR END AS v, repeat('x', 280) AS pad FROM range(64000) t(i)`,
  );
  // No value in the head's column `note`; numbers after row 300,000, whose largest (100002) is not the largest text.
  await putCsv(
    "sparse.csv",
    `SELECT i AS id, CASE WHEN i >= 300000 THEN (i % 100003)::VARCHAR ELSE '' END AS note, 'row-' || i AS label FROM range(${ROWS}) t(i)`,
  );
  // A 20 ms round trip (a far store) and ~3 MB/s a connection: the object takes a few seconds.
  wan = await startWanProxy(s3().endpoint, { delayMs: 10, windowBytes: 32 * 1024 });
  proxy = await startFaultProxy(wan.endpoint);
  ({ client, close } = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint, TMPDIR: tmp },
  }));
}, 180_000);
afterAll(async () => {
  await close?.();
  await proxy?.stop();
  await wan?.stop();
});

/** The same query by DuckDB over the whole local file, read as the server reads a file it has whole (tables.ts). */
async function expected(key: string, sql: string, numbers = true): Promise<unknown[][]> {
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  const from = `FROM read_csv('${join(local, key)}', buffer_size = 4194304)`;
  const rows = (await duck.runAndReadAll(sql.replace("FROM objects", from))).getRowsJson();
  // Its BIGINTs come as strings; the server's as numbers.
  return numbers ? rows.map((r) => r.map((v) => (typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : v))) : rows;
}

const query = (key: string, sql: string) => call(client, "query_objects", { bucket_name: bucket, keys: [key], sql });

/** The query directories the server has now. */
const workspaces = () =>
  existsSync(tmp) ? readdirSync(tmp).filter((name) => name.startsWith("store-mcp-query-")) : [];

/** Runs `run` while watching for the engine reading a FIFO while the object's file is still being downloaded. */
async function watchingOverlap<T>(run: () => Promise<T>): Promise<{ result: T; overlapped: boolean }> {
  let overlapped = false;
  let watching = true;
  const watch = (async () => {
    while (watching) {
      for (const ws of workspaces()) {
        const data = join(tmp, ws, "data");
        const fifo = join(data, "1.stream.csv");
        try {
          if (lstatSync(fifo).isFIFO() && existsSync(join(data, "1.part")) && heldOpen(fifo)) overlapped = true;
        } catch {}
      }
      await Bun.sleep(20);
    }
  })();
  try {
    return { result: await run(), overlapped };
  } finally {
    watching = false;
    await watch;
  }
}

/** Whether some process holds `path` open. */
function heldOpen(path: string): boolean {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === path) return true;
      } catch {}
    }
  }
  return false;
}

describe("query_objects over a large CSV", () => {
  test("the engine reads the object while it downloads (a FIFO held open while the file is still .part): the rows are DuckDB's over the whole file", async () => {
    const sql = "SELECT grp, count(*) AS n, sum(v) AS total, max(label) AS last FROM objects GROUP BY grp ORDER BY grp";
    const { result: r, overlapped } = await watchingOverlap(() => query("plain.csv", sql));
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.rows).toEqual(await expected("plain.csv", sql));
    expect(r.structuredContent!.bytes_read).toBe(lstatSync(join(local, "plain.csv")).size);
    expect(overlapped).toBe(true);
    expect(workspaces()).toEqual([]);
  }, 120_000);

  test("a row past the head that its types do not fit (a word among numbers): answered over the whole file, as DuckDB does", async () => {
    const sql = "SELECT typeof(v) AS t, count(*) AS n, max(v) AS m FROM objects GROUP BY ALL";
    const want = await expected("widens.csv", sql);
    // The premise: over the whole file the column is text (a stream typed by the head alone fails at row 16,000).
    expect(want).toEqual([["VARCHAR", 64000, "n/a"]]);
    const r = await query("widens.csv", sql);
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.rows).toEqual(want);
  }, 120_000);

  test("a column with no value in the head (numbers later): answered as over the whole file", async () => {
    const sql = "SELECT typeof(max(note)) AS t, max(note)::VARCHAR AS m, count(note)::INTEGER AS n FROM objects";
    const want = await expected("sparse.csv", sql, false);
    const r = await query("sparse.csv", sql);
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.rows).toEqual(want);
  }, 120_000);

  test("a LIMIT met early, and a query that never reads the table, answer and leave nothing behind", async () => {
    const few = await query("plain.csv", "SELECT id, label FROM objects LIMIT 3");
    expect(few.isError, textOf(few)).toBeFalsy();
    expect(few.structuredContent!.rows).toEqual([
      [0, "row-0"],
      [1, "row-1"],
      [2, "row-2"],
    ]);
    const none = await query("plain.csv", "SELECT id FROM objects LIMIT 0");
    expect(none.isError, textOf(none)).toBeFalsy();
    expect(none.structuredContent!.rows).toEqual([]);
    expect(workspaces()).toEqual([]);
  }, 120_000);

  test("a store that goes away once the head is read is an error, never rows from the object's first part; the next query is answered", async () => {
    try {
      const pending = query("plain.csv", "SELECT count(*) AS n FROM objects");
      // The engine has the head (streaming started): from now on the store refuses every request (not retried), the
      // open connections dropped.
      for (let i = 0; i < 500 && !workspaces().some((ws) => existsSync(join(tmp, ws, "data", "1.head.csv"))); i++)
        await Bun.sleep(20);
      proxy.set({ kind: "http-error", status: 403, code: "AccessDenied", count: 10_000 });
      const r = await pending;
      expect(r.isError, textOf(r)).toBe(true);
      expect(r.structuredContent?.rows).toBeUndefined();
    } finally {
      proxy.set({ kind: "pass" });
    }
    expect(workspaces()).toEqual([]);
    const again = await query("plain.csv", "SELECT count(*) AS n FROM objects");
    expect(again.structuredContent!.rows).toEqual([[ROWS]]);
  }, 120_000);
});
