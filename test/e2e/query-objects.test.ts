/**
 * query_objects through the compiled binary against Ceph: aggregates and
 * filters over CSV (plain, .gz, and gzip'd by Content-Encoding), JSON Lines
 * and DuckDB-written Parquet seen as one table; a join of two objects; bad
 * SQL answered with the engine's message, its position and the columns;
 * every escape the issue names refused (and no file written, no request
 * made); a result larger than one answer cut and continued exactly; a
 * cancelled query stopped; the private directory gone after every query.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { DuckDBInstance } from "@duckdb/node-api";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startFaultProxy } from "../helpers/fault-proxy.ts";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, requireBinary, sharedBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

let bucket: string;
let client: Client;
const shared = sharedBinary(() => ({ env: { ...s3Env(), TMPDIR: tmp } }));
/** The server's temp directory: every query's private directory is made (and must be removed) here. */
let tmp: string;
const put = (Key: string, Body: string | Uint8Array, extra: Record<string, string> = {}) =>
  sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body, ...extra }));

const REGIONS = ["north", "south", "east"];
const PRODUCTS = ["apple", "pear", "plum", "fig"];
type Sale = { region: string; product: string; amount: number };
const salesOf = (month: number, n: number): Sale[] =>
  Array.from({ length: n }, (_, i) => ({
    region: REGIONS[(i + month) % 3]!,
    product: PRODUCTS[(i * 7 + month) % 4]!,
    amount: ((i * 13 + month * 5) % 97) + 1,
  }));
const csvOf = (rows: Sale[], sep = ",") =>
  `region${sep}product${sep}amount\n${rows.map((r) => [r.region, r.product, r.amount].join(sep)).join("\n")}\n`;
const jan = salesOf(1, 500);
const feb = salesOf(2, 400);
const mar = salesOf(3, 300);
const CATEGORY: Record<string, string> = { apple: "pome", pear: "pome", plum: "stone", fig: "other" };
const WIDE_ROWS = 3000;

beforeAll(async () => {
  requireBinary();
  bucket = await freshBucket("query");
  await put("sales/2026-01.csv", csvOf(jan));
  await put("sales/2026-02.csv.gz", gzipSync(csvOf(feb)));
  // gzip'd text under a plain name, told by its stored bytes.
  await put("sales/2026-03.csv", gzipSync(csvOf(mar)), { ContentEncoding: "gzip" });
  await put("sales/notes.txt", "not a table\n");
  // A folder marker, as consoles make them, and an empty CSV: no rows, no columns.
  await put("sales/", "");
  await put("sales/empty.csv", "");
  await put(
    "events.jsonl",
    `${Array.from({ length: 50 }, (_, i) =>
      JSON.stringify({ id: i, kind: i % 5 === 0 ? "error" : "info", ms: i * 2, tags: ["a", String(i % 3)] }),
    ).join("\n")}\n`,
  );
  await put("ref/customers.tsv", "name\tregion\nada\tnorth\nbob\tsouth\n");
  // A key that would end a SQL string literal and start another statement, were it pasted unescaped.
  await put("odd/it's'); COPY (SELECT 1) TO ('x.csv.gz", "a,b\n1,2\n");
  const dir = tempDir("query-fixtures");
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  await duck.run(
    `COPY (SELECT * FROM (VALUES ${Object.entries(CATEGORY)
      .map(([p, c]) => `('${p}', '${c}')`)
      .join(", ")}) t(product, category)) TO '${join(dir, "products.parquet")}' (FORMAT parquet)`,
  );
  await put("ref/products.parquet", readFileSync(join(dir, "products.parquet")));
  // Rows of 2,000 characters each: 6 MB, more than one answer holds.
  await put(
    "wide/big.csv",
    `n,text\n${Array.from({ length: WIDE_ROWS }, (_, i) => `${i + 1},${String(i + 1).padStart(6, "0")}${"x".repeat(1994)}`).join("\n")}\n`,
  );
  tmp = tempDir("query-tmp");
  await shared.ensure();
}, 120_000);
// A test that left the shared server closed (a timeout mid-call) costs itself only: the next one gets a new server.
beforeEach(async () => {
  await shared.ensure();
  client = shared.client;
});
afterAll(async () => {
  await shared.close();
});

const query = (args: Record<string, unknown>) => call(client, "query_objects", { bucket_name: bucket, ...args });
const sum = (rows: Sale[], by: (s: Sale) => string) => {
  const out = new Map<string, { n: number; total: number }>();
  for (const r of rows) {
    const o = out.get(by(r)) ?? { n: 0, total: 0 };
    o.n++;
    o.total += r.amount;
    out.set(by(r), o);
  }
  return [...out].sort(([a], [b]) => a.localeCompare(b)).map(([k, o]) => [k, o.n, o.total]);
};
/** Whatever happened, no query left its private directory behind. */
const noQueryDirectories = () => expect(readdirSync(tmp).filter((n) => n.startsWith("store-mcp-query-"))).toEqual([]);

describe("query_objects", () => {
  test("an aggregate over a prefix: plain, .gz and Content-Encoding: gzip CSVs as one table, with typed columns", async () => {
    const r = await query({
      prefix: "sales/",
      include: ["*.csv", "*.csv.gz"],
      sql: "SELECT region, count(*) AS n, sum(amount) AS total FROM objects GROUP BY region ORDER BY region",
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    const s = r.structuredContent!;
    expect(s.columns).toEqual([
      { name: "region", type: "VARCHAR" },
      { name: "n", type: "BIGINT" },
      { name: "total", type: "HUGEINT" },
    ]);
    expect(s.rows).toEqual(sum([...jan, ...feb, ...mar], (x) => x.region));
    expect(s).toMatchObject({ objects: 3, rows_total: 3, first_row: 1, truncated: false });
    expect(s.bytes_read).toBeGreaterThan(csvOf(jan).length);
    expect(textOf(r)).toContain("region | n | total");
    noQueryDirectories();
  });

  test("filters and _key: which object each row came from", async () => {
    const r = await query({
      prefix: "sales/",
      include: ["2026-*"],
      sql: "SELECT _key, count(*) AS big FROM objects WHERE amount > 50 AND product = 'fig' GROUP BY _key ORDER BY _key",
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    const big = (rows: Sale[]) => rows.filter((x) => x.amount > 50 && x.product === "fig").length;
    expect(r.structuredContent!.rows).toEqual([
      ["sales/2026-01.csv", big(jan)],
      ["sales/2026-02.csv.gz", big(feb)],
      ["sales/2026-03.csv", big(mar)],
    ]);
  });

  test("a join of two objects (CSV sales and a Parquet table) by their _key", async () => {
    const r = await query({
      keys: ["sales/2026-01.csv", "ref/products.parquet"],
      sql: "SELECT p.category, sum(s.amount) AS total FROM objects s JOIN objects p ON s.product = p.product WHERE s._key = 'sales/2026-01.csv' AND p._key = 'ref/products.parquet' GROUP BY p.category ORDER BY p.category",
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.rows).toEqual(sum(jan, (x) => CATEGORY[x.product]!).map(([k, , total]) => [k, total]));
  });

  test("JSON Lines (nested values as JSON) and a TSV", async () => {
    const ev = await query({
      keys: ["events.jsonl"],
      sql: "SELECT kind, count(*) AS n, max(ms) AS max_ms, any_value(tags) AS tags FROM objects WHERE id < 10 GROUP BY kind ORDER BY kind",
    });
    expect(ev.isError, textOf(ev)).toBeFalsy();
    expect(ev.structuredContent!.rows.map((row: unknown[]) => row.slice(0, 3))).toEqual([
      ["error", 2, 10],
      ["info", 8, 18],
    ]);
    expect(ev.structuredContent!.rows[0][3]).toHaveLength(2);
    const tsv = await query({ keys: ["ref/customers.tsv"], sql: "SELECT name FROM objects WHERE region = 'south'" });
    expect(tsv.structuredContent!.rows).toEqual([["bob"]]);
  });

  test("objects whose names tell no format (.log, none) are read by content, and the answer says how", async () => {
    await put("logs/app.log", "ts|level|msg\n2026-01-01|INFO|started\n2026-01-02|WARN|slow\n");
    await put("logs/events", '{"kind":"a"}\n{"kind":"b"}\n');
    const log = await query({ keys: ["logs/app.log"], sql: "SELECT level FROM objects ORDER BY ts" });
    expect(log.isError, textOf(log)).toBeFalsy();
    expect(log.structuredContent!.rows).toEqual([["INFO"], ["WARN"]]);
    expect(log.structuredContent!.read_as).toEqual([
      { key: "logs/app.log", format: "csv", delimiter: "|", header: true },
    ]);
    expect(textOf(log)).toContain('logs/app.log as CSV (delimiter "|", first line the header)');
    const events = await query({ keys: ["logs/events"], sql: "SELECT count(*) FROM objects" });
    expect(events.structuredContent!.read_as).toEqual([{ key: "logs/events", format: "json" }]);
    // A name that says its format: nothing to say.
    const named = await query({ keys: ["sales/2026-01.csv"], sql: "SELECT count(*) FROM objects" });
    expect(named.structuredContent!.read_as).toBeUndefined();
    expect(textOf(named)).not.toContain("Read by content");
  });

  test("a key with quotes and SQL in it is only a name: _key holds it as it is", async () => {
    const key = "odd/it's'); COPY (SELECT 1) TO ('x.csv.gz";
    const r = await query({ prefix: "odd/", sql: "SELECT _key, a + b AS s FROM objects" });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.rows).toEqual([[key, 3]]);
    expect(existsSync("x.csv.gz")).toBe(false);
  });

  test("bad SQL: the engine's message and position, and the table's columns", async () => {
    const syntax = await query({ keys: ["sales/2026-01.csv"], sql: "SELEC region FROM objects" });
    expect(syntax.isError).toBe(true);
    expect(textOf(syntax)).toContain("InvalidSQL");
    expect(textOf(syntax)).toContain('syntax error at or near "SELEC"');
    expect(textOf(syntax)).toContain("LINE 1: SELEC region FROM objects");
    expect(textOf(syntax)).toContain("_key VARCHAR, region VARCHAR, product VARCHAR, amount BIGINT");
    const column = await query({ keys: ["sales/2026-01.csv"], sql: "SELECT regoin FROM objects" });
    expect(textOf(column)).toContain('Referenced column "regoin" not found');
    expect(textOf(column)).toContain("region");
    noQueryDirectories();
  });

  test("every escape is refused: local files, COPY TO, ATTACH, INSTALL/LOAD, a URL, a setting, two statements; nothing written, nothing fetched", async () => {
    const outside = tempDir("query-outside");
    writeFileSync(join(outside, "secret.csv"), "secret\nhunter2\n");
    let requests = 0;
    const web = Bun.serve({ port: 0, fetch: () => (requests++, new Response("a,b\n1,2\n")) });
    try {
      const attempts = [
        "SELECT * FROM read_csv('/etc/passwd')",
        `SELECT * FROM read_csv('${join(outside, "secret.csv")}')`,
        `SELECT * FROM read_text('${join(outside, "secret.csv")}')`,
        "SELECT * FROM glob('/etc/*')",
        `COPY (SELECT * FROM objects) TO '${join(outside, "copied.csv")}'`,
        "COPY (SELECT 1) TO 'relative.csv'",
        `ATTACH '${join(outside, "db.duckdb")}' AS other`,
        "INSTALL httpfs",
        "LOAD httpfs",
        `SELECT * FROM read_csv('http://127.0.0.1:${web.port}/x.csv')`,
        "SET enable_external_access = true",
        "SET memory_limit = '10GB'",
        "SELECT 1; SELECT 2",
        `SELECT 1; COPY (SELECT 1) TO '${join(outside, "second.csv")}'`,
      ];
      for (const sql of attempts) {
        const r = await query({ keys: ["sales/2026-01.csv"], sql });
        expect(r.isError, sql).toBe(true);
        expect(textOf(r), sql).toMatch(/QueryRefused/);
        expect(textOf(r), sql).not.toContain("hunter2");
      }
      expect(readdirSync(outside).sort()).toEqual(["secret.csv"]);
      expect(existsSync("relative.csv")).toBe(false);
      expect(requests).toBe(0);
      // And the server still answers.
      const ok = await query({ keys: ["sales/2026-01.csv"], sql: "SELECT count(*) FROM objects" });
      expect(ok.structuredContent!.rows).toEqual([[jan.length]]);
      noQueryDirectories();
    } finally {
      web.stop(true);
    }
  });

  test("a result larger than one answer is cut to fit, and the continuation resumes at exactly the next row", async () => {
    const sql = "SELECT n, text FROM objects ORDER BY n";
    const seen: number[] = [];
    let token: string | undefined;
    let calls = 0;
    do {
      const r = await query({
        keys: ["wide/big.csv"],
        sql,
        max_rows: 10_000,
        ...(token ? { continuation_token: token } : {}),
      });
      expect(r.isError, textOf(r)).toBeFalsy();
      const s = r.structuredContent!;
      expect(s.rows_total).toBe(WIDE_ROWS);
      expect(s.first_row).toBe(seen.length + 1);
      for (const [n, text] of s.rows) {
        expect(text.slice(0, 6)).toBe(String(n).padStart(6, "0"));
        seen.push(n);
      }
      if (s.truncated) expect(s.cut_to_fit).toBe(true);
      // Within what one answer may take (runtime/response-budget.ts: 6 MiB).
      expect(JSON.stringify(r).length).toBeLessThan(6 * 1024 * 1024);
      token = s.continuation_token;
      calls++;
    } while (token && calls < 20);
    expect(seen).toEqual(Array.from({ length: WIDE_ROWS }, (_, i) => i + 1));
    expect(calls).toBeGreaterThan(2);
    // max_rows cuts too; a token is bound to its query.
    const two = await query({ keys: ["wide/big.csv"], sql: "SELECT n FROM objects ORDER BY n", max_rows: 2 });
    expect(two.structuredContent).toMatchObject({ rows: [[1], [2]], truncated: true });
    const other = await query({
      keys: ["wide/big.csv"],
      sql: "SELECT n FROM objects ORDER BY n DESC",
      continuation_token: two.structuredContent!.continuation_token,
    });
    expect(textOf(other)).toContain("InvalidParameter");
  });

  test("a server's first query starts its worker while the objects are fetched, not after", async () => {
    // ~2 MB of CSV through a store sending 384 KiB a second: several seconds of fetching.
    await put("slow/big.csv", csvOf(salesOf(4, 120_000)));
    const store = await startFaultProxy(s3().endpoint);
    store.set({ kind: "throttle", bytesPerSecond: 384 * 1024 });
    const fresh = await connectBinary({ env: { ...s3Env(), STORE_ENDPOINT_URL: store.endpoint } });
    try {
      const started = performance.now();
      let childAt: number | undefined;
      let done = false;
      const answer = call(fresh.client, "query_objects", {
        bucket_name: bucket,
        keys: ["slow/big.csv"],
        sql: "SELECT count(*) FROM objects",
      }).finally(() => (done = true));
      while (!done && childAt === undefined) {
        if (
          Bun.spawnSync(["pgrep", "-P", String(fresh.pid)])
            .stdout.toString()
            .trim() !== ""
        )
          childAt = performance.now();
        else await Bun.sleep(50);
      }
      const r = await answer;
      expect(r.structuredContent!.rows).toEqual([[120_000]]);
      const took = performance.now() - started;
      expect(took).toBeGreaterThan(2_500);
      // The worker (the server's only child) was there within the first half of the fetch.
      expect(childAt! - started).toBeLessThan(took / 2);
    } finally {
      await fresh.close();
      await store.stop();
    }
  });

  test("a cancelled query stops, leaves nothing behind, and the server keeps serving", async () => {
    const cancel = new AbortController();
    const started = performance.now();
    const running = client.callTool(
      {
        name: "query_objects",
        arguments: {
          bucket_name: bucket,
          keys: ["sales/2026-01.csv"],
          sql: "SELECT count(*) FROM objects, range(100000000000) t(i)",
        },
      },
      undefined,
      { signal: cancel.signal },
    );
    setTimeout(() => cancel.abort(), 1500);
    await expect(running).rejects.toThrow();
    const after = await query({ keys: ["sales/2026-01.csv"], sql: "SELECT count(*) FROM objects" });
    expect(after.structuredContent!.rows).toEqual([[jan.length]]);
    expect(performance.now() - started).toBeLessThan(30_000);
    // The cancelled query's engine stopped at its next check and its directory went with it.
    for (let i = 0; i < 50 && readdirSync(tmp).some((n) => n.startsWith("store-mcp-query-")); i++) await Bun.sleep(100);
    noQueryDirectories();
  });

  test("a query past the call budget answers with a job: job_status gives its rows; cancel_job stops another and leaves nothing behind", async () => {
    const jobsTmp = tempDir("query-jobs-tmp");
    const slow = await connectBinary({ env: { ...s3Env(), TMPDIR: jobsTmp, STORE_CALL_BUDGET_SECONDS: "1" } });
    try {
      // ~3 s of hashing on 2 threads here.
      const sql = "SELECT count(*) AS n, sum(hash(i) % 7) AS h FROM objects, range(1000000) t(i)";
      const handed = await call(slow.client, "query_objects", {
        bucket_name: bucket,
        keys: ["sales/2026-03.csv"],
        sql,
      });
      expect(handed.isError, textOf(handed)).toBeFalsy();
      const job = handed.structuredContent!.job;
      expect(job).toMatchObject({ state: "running", tool: "query_objects" });
      let status = handed;
      for (let i = 0; i < 60 && status.structuredContent!.job?.state !== "done"; i++)
        status = await call(slow.client, "job_status", { job_id: job.id });
      expect(status.structuredContent).toMatchObject({
        job: { state: "done" },
        rows_total: 1,
        columns: [
          { name: "n", type: "BIGINT" },
          { name: "h", type: "HUGEINT" },
        ],
      });
      expect(status.structuredContent!.rows[0][0]).toBe(mar.length * 1_000_000);
      const other = await call(slow.client, "query_objects", {
        bucket_name: bucket,
        keys: ["sales/2026-01.csv"],
        sql: "SELECT count(*) FROM objects, range(100000000000) t(i)",
      });
      const cancelled = await call(slow.client, "cancel_job", { job_id: other.structuredContent!.job.id });
      expect(cancelled.isError, textOf(cancelled)).toBeFalsy();
      expect(cancelled.structuredContent!.job.state).toBe("cancelled");
      for (let i = 0; i < 50 && readdirSync(jobsTmp).length > 0; i++) await Bun.sleep(100);
      expect(readdirSync(jobsTmp).filter((n) => n.startsWith("store-mcp-query-"))).toEqual([]);
    } finally {
      await slow.close();
    }
  }, 120_000);

  test("two queries at once both answer (each its own engine and directory, the memory reserved in turn)", async () => {
    const [a, b] = await Promise.all([
      query({ keys: ["sales/2026-01.csv"], sql: "SELECT sum(amount) FROM objects" }),
      query({ keys: ["events.jsonl"], sql: "SELECT count(*) FROM objects WHERE kind = 'error'" }),
    ]);
    expect(a.structuredContent!.rows).toEqual([[jan.reduce((n, x) => n + x.amount, 0)]]);
    expect(b.structuredContent!.rows).toEqual([[10]]);
    noQueryDirectories();
  });

  test("the engine is loaded only from a cache directory nobody else can write: a planted one is passed over", async () => {
    // A first query writes the engine into a fresh cache.
    const good = tempDir("engine-cache");
    const first = await connectBinary({ env: { ...s3Env(), XDG_CACHE_HOME: good } });
    try {
      expect(
        (
          await call(first.client, "query_objects", {
            bucket_name: bucket,
            keys: ["events.jsonl"],
            sql: "SELECT count(*) FROM objects",
          })
        ).structuredContent!.rows,
      ).toEqual([[50]]);
    } finally {
      await first.close();
    }
    const [engineDir] = readdirSync(join(good, "store-mcp-server")).filter((n) => n.startsWith("duckdb-"));
    expect(engineDir).toBeDefined();
    // The same folder elsewhere, its library swapped for junk of the same size, and writable by everyone.
    const planted = tempDir("planted-cache");
    const dir = join(planted, "store-mcp-server", engineDir!);
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(join(good, "store-mcp-server", engineDir!))) {
      const bytes = readFileSync(join(good, "store-mcp-server", engineDir!, name));
      writeFileSync(join(dir, name), name === "duckdb.node" ? bytes : new Uint8Array(bytes.length).fill(0x90));
    }
    chmodSync(dir, 0o777);
    const ownTmp = tempDir("engine-tmp");
    const second = await connectBinary({ env: { ...s3Env(), XDG_CACHE_HOME: planted, TMPDIR: ownTmp } });
    try {
      const r = await call(second.client, "query_objects", {
        bucket_name: bucket,
        keys: ["events.jsonl"],
        sql: "SELECT count(*) FROM objects",
      });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(r.structuredContent!.rows).toEqual([[50]]);
      // Loaded from the user's own folder in the temp directory instead.
      expect(readdirSync(ownTmp).some((n) => n.startsWith("store-mcp-server-"))).toBe(true);
    } finally {
      await second.close();
    }
  });

  test("a query needing more than its memory limit is stopped with an actionable error", async () => {
    const r = await query({
      keys: ["sales/2026-01.csv"],
      sql: "SELECT string_agg(repeat('x', 1000) || i::VARCHAR, ',') FROM range(300000) t(i)",
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("QueryTooLarge");
    expect(textOf(r)).toContain("Out of Memory");
    expect(textOf(r)).toContain("96 MB");
  });

  test("DELETE, UPDATE and INSERT on the table are refused as what they are (QueryRefused), not as bad SQL", async () => {
    for (const sql of [
      "DELETE FROM objects",
      "UPDATE objects SET amount = 0",
      "  -- a comment\n insert into objects VALUES (1)",
    ]) {
      const r = await query({ keys: ["sales/2026-01.csv"], sql });
      expect(r.isError, sql).toBe(true);
      expect(textOf(r), sql).toContain("QueryRefused");
    }
    noQueryDirectories();
  });

  test("keys or prefix, one of them; an empty choice; a missing key", async () => {
    expect(textOf(await query({ sql: "SELECT 1" }))).toContain("InvalidParameter");
    expect(textOf(await query({ keys: ["events.jsonl"], prefix: "sales/", sql: "SELECT 1" }))).toContain(
      "InvalidParameter",
    );
    expect(textOf(await query({ prefix: "nothing-here/", sql: "SELECT 1" }))).toContain("NoObjects");
    // What strict-mode clients send (every field filled): keys [] with a prefix, and keys with prefix "" and include [].
    const filled = await query({
      keys: [],
      prefix: "sales/",
      include: ["*.csv", "*.csv.gz"],
      sql: "SELECT count(*) AS n FROM objects",
    });
    expect(filled.structuredContent?.rows, textOf(filled)).toEqual([[jan.length + feb.length + mar.length]]);
    const named = await query({
      keys: ["events.jsonl"],
      prefix: "",
      include: [],
      sql: "SELECT count(*) AS n FROM objects",
    });
    expect(named.structuredContent?.rows, textOf(named)).toEqual([[50]]);
    const missing = await query({ keys: ["sales/none.csv"], sql: "SELECT 1" });
    expect(textOf(missing)).toContain("NoSuchKey");
    expect(textOf(missing)).toContain("sales/none.csv");
    noQueryDirectories();
  });

  test("--read-only offers query_objects; --bucket keeps it to its buckets, and its keys to plain names", async () => {
    const ro = await connectBinary({ env: s3Env(), args: ["--read-only"] });
    try {
      expect((await ro.client.listTools()).tools.map((t) => t.name)).toContain("query_objects");
      const r = await call(ro.client, "query_objects", {
        bucket_name: bucket,
        keys: ["events.jsonl"],
        sql: "SELECT count(*) FROM objects",
      });
      expect(r.structuredContent!.rows).toEqual([[50]]);
    } finally {
      await ro.close();
    }
    const only = await connectBinary({ env: s3Env(), args: ["--bucket", bucket] });
    try {
      const r = await call(only.client, "query_objects", {
        bucket_name: bucket,
        keys: ["events.jsonl", "ref/../../other-bucket/secret.csv"],
        sql: "SELECT count(*) FROM objects",
      });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("UnsafeKey");
      expect(
        (
          await call(only.client, "query_objects", {
            bucket_name: bucket,
            keys: ["events.jsonl"],
            sql: "SELECT count(*) FROM objects",
          })
        ).structuredContent!.rows,
      ).toEqual([[50]]);
    } finally {
      await only.close();
    }
    const other = await connectBinary({ env: s3Env(), args: ["--bucket", "some-other-bucket"] });
    try {
      const r = await call(other.client, "query_objects", {
        bucket_name: bucket,
        keys: ["events.jsonl"],
        sql: "SELECT count(*) FROM objects",
      });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("BucketNotAllowed");
    } finally {
      await other.close();
    }
  });
});
