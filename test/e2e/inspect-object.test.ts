/**
 * inspect_object through the compiled binary against Ceph, on files made by
 * real writers (DuckDB for Parquet, zip, tar and gzip from the system):
 * CSV/TSV, JSON and JSON Lines, Parquet, zip (zip64 too), tar, tar.gz,
 * gzip'd CSV, an image, and anything else; a 256 MiB zip and a large Parquet
 * read with a handful of ranged requests (counted at a recording proxy);
 * archive members inspected.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { DuckDBInstance } from "@duckdb/node-api";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { pngOf } from "../helpers/png.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

let bucket: string;
let client: Client;
let close: () => Promise<void>;
let proxy: ReturnType<typeof startRecordingProxy>;
const dir = tempDir("inspect");
const put = (Key: string, Body: string | Uint8Array) =>
  sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body }));
const csv = (rows: number) =>
  "id,name,price,day,active\n" +
  Array.from(
    { length: rows },
    (_, i) =>
      `${i + 1},item ${i + 1},${(i * 1.5).toFixed(2)},2026-11-${String((i % 28) + 1).padStart(2, "0")},${i % 2 === 0}`,
  ).join("\n") +
  "\n";
const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: dir, stdio: "ignore" });

beforeAll(async () => {
  requireBinary();
  bucket = await freshBucket("inspect");
  await put("small.csv", csv(20));
  await put("big.csv", csv(20_000));
  await put("data.tsv", "a\tb\n1\tx\n2\ty\n");
  await put(
    "events.jsonl",
    `${Array.from({ length: 30 }, (_, i) =>
      JSON.stringify({ id: i, kind: i % 3 ? "click" : "view", at: `2026-11-0${(i % 9) + 1}` }),
    ).join("\n")}\n`,
  );
  await put(
    "doc.json",
    JSON.stringify([
      { a: 1, b: "x" },
      { a: 2.5, b: null },
    ]),
  );
  await put("config.json", JSON.stringify({ version: 3, servers: ["a"] }));
  // Parsed whole (under 8 MiB), but its first records alone are more than one answer may carry.
  await put("wide.json", JSON.stringify([0, 1, 2].map((i) => ({ id: i, blob: String(i).repeat(2_500_000) }))));
  await put("small.csv.gz", gzipSync(csv(20)));
  await put("big.csv.gz", gzipSync(csv(200_000)));
  await put("pixel.png", pngOf(7, 3));
  await put("notes.txt", "hello\nworld\n");
  await put("blob.bin", new Uint8Array([0x25, 0x50, 0x44, 0x46, 0, 1, 2, 3]));
  // Parquet by DuckDB: a small one, and one large enough that reading it whole would be obvious.
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  await duck.run(
    `COPY (SELECT i AS id, 'name ' || i AS name, i * 0.5 AS score, DATE '2026-01-01' + (i % 300)::INTEGER AS day FROM range(1, 101) t(i)) TO '${join(dir, "small.parquet")}' (FORMAT parquet)`,
  );
  // DuckDB writes each row group's column as one page (measured: a 3.3 MB page for 100,000 hashes): 200 row groups of
  // ~165 KB pages (pyarrow's 1 MiB pages are alike), and 2 row groups of 16 MB pages.
  await duck.run(
    `COPY (SELECT i AS id, md5(i::VARCHAR) AS hash, random() AS r FROM range(0, 1000000) t(i)) TO '${join(dir, "large.parquet")}' (FORMAT parquet, ROW_GROUP_SIZE 5000)`,
  );
  await duck.run(
    `COPY (SELECT i AS id, md5(i::VARCHAR) AS hash, random() AS r FROM range(0, 1000000) t(i)) TO '${join(dir, "big-pages.parquet")}' (FORMAT parquet, ROW_GROUP_SIZE 500000)`,
  );
  await put("small.parquet", readFileSync(join(dir, "small.parquet")));
  await put("large.parquet", readFileSync(join(dir, "large.parquet")));
  await put("big-pages.parquet", readFileSync(join(dir, "big-pages.parquet")));
  // Archives by the system's zip and tar.
  writeFileSync(join(dir, "a.csv"), csv(5));
  writeFileSync(join(dir, "b.txt"), "some text\n".repeat(1000));
  sh("zip", ["-q", "archive.zip", "a.csv", "b.txt"]);
  sh("zip", ["-q", "-fz", "archive64.zip", "a.csv", "b.txt"]);
  sh("tar", ["-cf", "archive.tar", "a.csv", "b.txt"]);
  sh("tar", ["-czf", "archive.tar.gz", "a.csv", "b.txt"]);
  for (const f of ["archive.zip", "archive64.zip", "archive.tar", "archive.tar.gz"])
    await put(f, readFileSync(join(dir, f)));
  // A stored member with one byte changed: its CRC-32 no longer holds.
  sh("zip", ["-q", "-0", "stored.zip", "b.txt"]);
  const damaged = readFileSync(join(dir, "stored.zip"));
  await put("stored.zip", damaged);
  const at = damaged.indexOf("some text");
  damaged[at] = "S".charCodeAt(0);
  await put("damaged.zip", damaged);
  // 256 MiB of zeros stored (not compressed) in a zip, with a small member after it.
  const big = join(dir, "zeros.bin");
  closeSync(openSync(big, "w"));
  truncateSync(big, 256 * 1024 * 1024);
  sh("zip", ["-q", "-0", "huge.zip", "zeros.bin", "a.csv"]);
  // A tar of a 64 MiB member and a small one after it.
  const zeros64 = join(dir, "zeros64.bin");
  closeSync(openSync(zeros64, "w"));
  truncateSync(zeros64, 64 * 1024 * 1024);
  sh("tar", ["-cf", "big.tar", "zeros64.bin", "a.csv"]);
  // A tar.gz whose first member is 24 MiB that gzip cannot shrink: what is inflated shows in the bytes read.
  writeFileSync(join(dir, "noise.bin"), randomBytes(24 * 1024 * 1024));
  sh("tar", ["-czf", "noise.tar.gz", "noise.bin", "a.csv"]);
  mkdirSync(join(dir, "out"));
  proxy = startRecordingProxy(s3().endpoint);
  ({ client, close } = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint },
    args: ["--allowed-dir", dir],
  }));
  // Uploaded straight to the store: the recording proxy is for the reads, and relaying 256 MiB through it costs this
  // process more CPU than every test below together.
  const direct = await connectBinary({ env: s3Env(), args: ["--allowed-dir", dir] });
  try {
    for (const f of ["huge.zip", "big.tar", "noise.tar.gz"]) {
      const up = await call(direct.client, "upload_file", {
        bucket_name: bucket,
        object_key: f,
        local_file_path: join(dir, f),
      });
      expect(up.isError, textOf(up)).toBeFalsy();
    }
  } finally {
    await direct.close();
  }
}, 240_000);
afterAll(async () => {
  await close?.();
  proxy?.stop();
});

const inspect = async (key: string, member?: string) => {
  const r = await call(client, "inspect_object", {
    bucket_name: bucket,
    object_key: key,
    ...(member ? { archive_member: member } : {}),
  });
  expect(r.isError, textOf(r)).toBeFalsy();
  return r;
};
/** GETs for one key at the proxy since `from`, and the bytes they asked for. */
const reads = (key: string, from: number) => {
  const gets = proxy.requests.slice(from).filter((q) => q.method === "GET" && q.path.endsWith(`/${key}`));
  const bytes = gets.reduce((n, q) => {
    const m = /bytes=(\d+)-(\d+)/.exec(q.range ?? "");
    return n + (m ? Number(m[2]) - Number(m[1]) + 1 : Infinity);
  }, 0);
  return { requests: gets.length, bytes };
};

describe("inspect_object", () => {
  test("CSV: delimiter, header, columns with types, first rows; exact rows when read whole, approximate for a large file", async () => {
    const small = (await inspect("small.csv")).structuredContent!;
    expect(small.format).toBe("csv");
    expect(small.summary).toMatchObject({ delimiter: ",", header: true, rows: 20, rows_exact: true });
    expect(small.summary.columns).toEqual([
      { name: "id", type: "integer", nullable: false },
      { name: "name", type: "string", nullable: false },
      { name: "price", type: "number", nullable: false },
      { name: "day", type: "date", nullable: false },
      { name: "active", type: "boolean", nullable: false },
    ]);
    expect(small.summary.first_rows[0]).toEqual(["1", "item 1", "0.00", "2026-11-01", "true"]);
    const from = proxy.requests.length;
    const big = await inspect("big.csv");
    expect(big.structuredContent!.summary.rows_exact).toBe(false);
    expect(Math.abs(big.structuredContent!.summary.rows - 20_000)).toBeLessThan(2_000);
    expect(reads("big.csv", from)).toEqual({ requests: 1, bytes: 256 * 1024 });
    expect(textOf(big)).toContain("| id | name | price | day | active |");
    expect((await inspect("data.tsv")).structuredContent!.summary).toMatchObject({
      format: "tsv",
      delimiter: "\t",
      rows: 2,
    });
  });

  test("JSON Lines, a JSON array, a JSON document; gzip'd CSV; an image; text; anything else", async () => {
    const lines = (await inspect("events.jsonl")).structuredContent!.summary;
    expect(lines).toMatchObject({ format: "jsonl", records: 30, records_exact: true });
    expect(lines.fields).toEqual([
      { name: "id", types: ["integer"] },
      { name: "kind", types: ["string"] },
      { name: "at", types: ["string"] },
    ]);
    expect((await inspect("doc.json")).structuredContent!.summary).toMatchObject({
      format: "json",
      records: 2,
      fields: [
        { name: "a", types: ["integer", "number"] },
        { name: "b", types: ["null", "string"] },
      ],
    });
    expect((await inspect("config.json")).structuredContent!.summary.top_level).toEqual({
      type: "object",
      keys: ["version", "servers"],
    });
    // The response budget: the examples are cut to fit, the facts stay.
    const wide = await inspect("wide.json");
    expect(wide.structuredContent!.summary).toMatchObject({
      format: "json",
      records: 3,
      fields: [
        { name: "id", types: ["integer"] },
        { name: "blob", types: ["string"] },
      ],
      cut_to_fit: true,
    });
    expect(JSON.stringify(wide).length).toBeLessThan(6 * 1024 * 1024);
    const gz = (await inspect("small.csv.gz")).structuredContent!;
    expect(gz).toMatchObject({ compression: "gzip", format: "csv", summary: { rows: 20, rows_exact: true } });
    // A large one: rows estimated from the sample and the compressed bytes it took.
    const bigGz = (await inspect("big.csv.gz")).structuredContent!.summary;
    expect(bigGz.rows_exact).toBe(false);
    expect(Math.abs(bigGz.rows - 200_000)).toBeLessThan(30_000);
    expect((await inspect("pixel.png")).structuredContent!.summary).toEqual({
      format: "image",
      image_format: "png",
      width: 7,
      height: 3,
    });
    expect((await inspect("notes.txt")).structuredContent!.summary).toMatchObject({
      format: "text",
      lines: ["hello", "world", ""],
    });
    expect((await inspect("blob.bin")).structuredContent!.summary).toEqual({
      format: "binary",
      detected_type: "application/pdf",
    });
  });

  test("Parquet: schema, row groups, rows, compression, statistics, first rows — a large file by a handful of ranged reads", async () => {
    const small = (await inspect("small.parquet")).structuredContent!.summary;
    expect(small.rows).toBe(100);
    expect(small.columns.map((c: { name: string; type: string }) => [c.name, c.type])).toEqual([
      ["id", "int64"],
      ["name", "string"],
      ["score", "decimal"],
      ["day", "date"],
    ]);
    expect(small.columns[0]).toMatchObject({ min: 1, max: 100, compression: "SNAPPY" });
    expect(small.first_rows[0]).toMatchObject({ id: 1, name: "name 1" });
    const from = proxy.requests.length;
    const large = await inspect("large.parquet");
    const s = large.structuredContent!.summary;
    expect(s.rows).toBe(1_000_000);
    expect(s.row_group_count).toBeGreaterThan(100);
    expect(s.first_rows).toHaveLength(10);
    const got = reads("large.parquet", from);
    expect(got.requests).toBeLessThanOrEqual(8);
    expect(got.bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(large.structuredContent!.size).toBeGreaterThan(got.bytes * 10);
    // A first page of 16 MB is not read for ten rows: the summary says so and where to get them.
    const at = proxy.requests.length;
    const bigPages = (await inspect("big-pages.parquet")).structuredContent!.summary;
    expect(bigPages).toMatchObject({ rows: 1_000_000, first_rows: [] });
    expect(bigPages.first_rows_note).toContain("query_objects");
    expect(reads("big-pages.parquet", at).bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
  });

  test("zip (and zip64), tar, tar.gz: every entry; a 256 MiB zip from its directory with a handful of requests", async () => {
    for (const key of ["archive.zip", "archive64.zip"]) {
      const s = (await inspect(key)).structuredContent!.summary;
      expect(s).toMatchObject({ format: "zip", total_entries: 2, listed_all: true });
      expect(s.entries.map((e: { name: string; size: number }) => [e.name, e.size])).toEqual([
        ["a.csv", csv(5).length],
        ["b.txt", 10_000],
      ]);
      expect(s.entries[1].method).toBe("deflate");
    }
    for (const key of ["archive.tar", "archive.tar.gz"]) {
      const r = (await inspect(key)).structuredContent!;
      expect(
        r.summary.entries.map((e: { name: string; size: number; type: string }) => [e.name, e.size, e.type]),
      ).toEqual([
        ["a.csv", csv(5).length, "file"],
        ["b.txt", 10_000, "file"],
      ]);
      expect(r.compression).toBe(key.endsWith(".gz") ? "gzip" : null);
    }
    // A tar has no directory, but a large member is jumped over, not read past.
    const tarFrom = proxy.requests.length;
    const bigTar = (await inspect("big.tar")).structuredContent!.summary;
    expect(bigTar.entries.map((e: { name: string; size: number }) => [e.name, e.size])).toEqual([
      ["zeros64.bin", 64 * 1024 * 1024],
      ["a.csv", csv(5).length],
    ]);
    expect(reads("big.tar", tarFrom).bytes).toBeLessThanOrEqual(4 * 1024 * 1024);
    const memberFrom = proxy.requests.length;
    expect((await inspect("big.tar", "a.csv")).structuredContent!.summary).toMatchObject({ format: "csv", rows: 5 });
    expect(reads("big.tar", memberFrom).bytes).toBeLessThanOrEqual(4 * 1024 * 1024);
    // A tar.gz member is inflated only as far as what is kept of it (inspect keeps its first 8 MiB), not to its end.
    const noiseFrom = proxy.requests.length;
    expect((await inspect("noise.tar.gz", "noise.bin")).structuredContent!.summary.format).toBe("binary");
    expect(reads("noise.tar.gz", noiseFrom).bytes).toBeLessThanOrEqual(12 * 1024 * 1024);
    const from = proxy.requests.length;
    const huge = await inspect("huge.zip");
    expect(
      huge.structuredContent!.summary.entries.map((e: { name: string; size: number; method: string }) => [
        e.name,
        e.size,
        e.method,
      ]),
    ).toEqual([
      ["zeros.bin", 256 * 1024 ** 2, "stored"],
      ["a.csv", csv(5).length, "stored"],
    ]);
    const got = reads("huge.zip", from);
    expect(got.requests).toBeLessThanOrEqual(3);
    expect(got.bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
  });

  test("archive members: a CSV inside a zip (deflated and stored), a tar and a tar.gz; a missing member names the way on", async () => {
    for (const key of ["archive.zip", "archive64.zip", "archive.tar", "archive.tar.gz"]) {
      const r = (await inspect(key, "a.csv")).structuredContent!;
      expect(r).toMatchObject({
        archive_member: "a.csv",
        format: "csv",
        size: csv(5).length,
        summary: { rows: 5, rows_exact: true },
      });
    }
    expect((await inspect("archive.zip", "b.txt")).structuredContent!.summary).toMatchObject({
      format: "text",
      lines: Array(20).fill("some text"),
    });
    const from = proxy.requests.length;
    expect((await inspect("huge.zip", "a.csv")).structuredContent!.summary).toMatchObject({ format: "csv", rows: 5 });
    expect(reads("huge.zip", from).bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    const missing = await call(client, "inspect_object", {
      bucket_name: bucket,
      object_key: "archive.zip",
      archive_member: "nope.csv",
    });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain("NoSuchMember");
    expect(textOf(missing)).toContain("without archive_member");
  });
});

describe("get_object archive_member", () => {
  const get = (key: string, args: Record<string, unknown>) =>
    call(client, "get_object", { bucket_name: bucket, object_key: key, ...args });

  test("read mode: a member's text from a zip (deflated, stored), a tar and a tar.gz, in windows", async () => {
    for (const key of ["archive.zip", "archive64.zip", "archive.tar", "archive.tar.gz", "huge.zip"]) {
      const r = await get(key, { archive_member: "a.csv" });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({
        key,
        archive_member: "a.csv",
        mode: "read",
        size: csv(5).length,
        truncated: false,
        text: csv(5),
      });
    }
    const first = await get("archive.zip", { archive_member: "b.txt", max_content_size: 25 });
    expect(first.structuredContent).toMatchObject({
      text: "some text\nsome text\nsome ",
      truncated: true,
      next_offset: 25,
      size: 10_000,
    });
    const second = await get("archive.zip", { archive_member: "b.txt", max_content_size: 25, offset: 25 });
    expect(second.structuredContent).toMatchObject({ text: "text\nsome text\nsome text\n", offset: 25 });
    const from = proxy.requests.length;
    await get("huge.zip", { archive_member: "a.csv" });
    expect(reads("huge.zip", from).bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
  });

  test("download mode: members saved byte-exact; a damaged member is refused (CRC-32) and leaves no file", async () => {
    for (const [key, member] of [
      ["archive.zip", "b.txt"],
      ["stored.zip", "b.txt"],
      ["archive.tar.gz", "b.txt"],
      ["archive.tar", "a.csv"],
      ["huge.zip", "a.csv"],
    ] as const) {
      const path = join(dir, "out", `${key}-${member}`);
      const r = await get(key, { archive_member: member, mode: "download", local_path: path });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(readFileSync(path, "utf8")).toBe(readFileSync(join(dir, member), "utf8"));
      expect(r.structuredContent).toMatchObject({
        archive_member: member,
        bytes: readFileSync(join(dir, member)).length,
      });
    }
    const bad = join(dir, "out", "damaged.txt");
    const r = await get("damaged.zip", { archive_member: "b.txt", mode: "download", local_path: bad });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("CRC-32");
    expect(existsSync(bad)).toBe(false);
    const read = await get("damaged.zip", { archive_member: "b.txt", max_content_size: 20_000 });
    expect(read.isError).toBe(true);
    expect(textOf(read)).toContain("UnreadableArchive");
  });
});
