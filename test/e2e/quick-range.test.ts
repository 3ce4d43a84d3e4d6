/**
 * The quick ranged GET (quick-range.ts) against Ceph RGW: the bytes of a
 * range and the object's size, for keys the SDK encodes, in path style and
 * virtual-host style; undefined (so the SDK's GET runs and reports) for a
 * replaced object, a range past its end, a missing key or refused
 * credentials. A read pinned to a stale ETag fails PreconditionFailed
 * through the SDK too. query_objects fetches a Parquet object's column
 * chunks with it, each pinned to the ETag its footer came with; an object
 * replaced between its footer and its columns fails the query naming it,
 * never mixing two objects' bytes, and the server serves on. A search's
 * windows after the first are quick, pinned, and never past the end.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { DuckDBInstance } from "@duckdb/node-api";
import { createS3Storage } from "../../src/storage/index.ts";
import { lazyS3Client } from "../../src/storage/requests/client.ts";
import { quickRange, quickRangeFits } from "../../src/storage/requests/quick-range.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { addressedConfig, call, connectBinary, testConfig, textOf } from "../helpers/mcp.ts";
import { type Recorded, startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const KEYS = ["plain.bin", "with space/and ü ñ 漢字.bin", "odd!'()*chars+plus%25=eq&amp~.dat"];
const BODY = randomBytes(300_000, 7);
let bucket: string;
const etags = new Map<string, string>();
const stop = () => new AbortController().signal;

beforeAll(async () => {
  bucket = await freshBucket("quickrange");
  for (const key of KEYS)
    etags.set(key, (await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: BODY }))).ETag!);
}, 60_000);

for (const style of ["path", "virtual-host"] as const) {
  test(`quick range (${style} style) gives the range's bytes and the object's size, whatever the key`, async () => {
    const handle = await lazyS3Client(addressedConfig(style))();
    for (const key of KEYS) {
      const range = { bucket, key, etag: etags.get(key)!, offset: 12_345, length: 100_000 };
      expect(quickRangeFits(range)).toBe(true);
      const out = await quickRange(handle, range, stop(), 10_000);
      expect(out, key).toBeDefined();
      expect(out!.output.ContentRange).toBe(`bytes 12345-112344/${BODY.length}`);
      expect(out!.output.ETag).toBe(etags.get(key));
      const chunks: Uint8Array[] = [];
      for await (const c of out!.output.Body as AsyncIterable<Uint8Array>) chunks.push(c);
      expect(Buffer.concat(chunks).equals(Buffer.from(BODY.subarray(12_345, 112_345)))).toBe(true);
      expect(Buffer.from(out!.bytes).equals(Buffer.from(BODY.subarray(12_345, 112_345)))).toBe(true);
    }
  });
}

test("quick range answers undefined, never wrong bytes, for a replaced object, a range past the end, a missing key, refused credentials", async () => {
  const handle = await lazyS3Client(testConfig())();
  const key = KEYS[0]!;
  const range = { bucket, key, etag: etags.get(key)!, offset: 1000, length: 1000 };
  expect(await quickRange(handle, { ...range, etag: `"${"0".repeat(32)}"` }, stop(), 10_000)).toBeUndefined();
  expect(await quickRange(handle, { ...range, offset: BODY.length - 10 }, stop(), 10_000)).toBeUndefined();
  expect(await quickRange(handle, { ...range, key: "no-such-key" }, stop(), 10_000)).toBeUndefined();
  const wrong = await lazyS3Client(
    testConfig({
      credentials: { accessKeyId: s3().accessKeyId, secretAccessKey: "wrong-secret-0000000000000000000000000" },
    }),
  )();
  expect(await quickRange(wrong, range, stop(), 10_000)).toBeUndefined();
  expect(quickRangeFits({ ...range, key: "a/../b" })).toBe(false);
  expect(quickRangeFits({ ...range, length: 0 })).toBe(false);
});

test("a read pinned to a stale ETag fails PreconditionFailed (the SDK's GET too); pinned to the right one, it gives the bytes", async () => {
  const storage = createS3Storage(testConfig());
  const key = KEYS[1]!;
  const err = await storage
    .readObjectHead({ bucket, key }, 500, undefined, 100, `"${"0".repeat(32)}"`)
    .catch((e: unknown) => e);
  expect((err as { code?: string }).code).toBe("PreconditionFailed");
  expect(String((err as Error).message)).toContain("changed");
  const got = await storage.readObjectHead({ bucket, key }, 500, undefined, 100, etags.get(key));
  expect(Buffer.from(got.bytes).equals(Buffer.from(BODY.subarray(100, 600)))).toBe(true);
  expect(got.meta.size).toBe(BODY.length);
});

let proxy: ReturnType<typeof startRecordingProxy>;
let replaceOnFirstChunk = false;
afterAll(() => proxy?.stop());

test("query_objects fetches a Parquet object's chunks (search_objects its windows) pinned to the first bytes' ETag, without the SDK; replaced meanwhile, the query fails naming it", async () => {
  const dir = tempDir("quickrange");
  const local = join(dir, "t.parquet");
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  await duck.run(
    `COPY (SELECT i AS id, md5(i::VARCHAR) AS payload, i % 7 AS small FROM range(200000) t(i)) TO '${local}' (FORMAT parquet, ROW_GROUP_SIZE 25000)`,
  );
  await duck.run(
    `COPY (SELECT i AS id, md5(i::VARCHAR) AS payload, i % 5 AS small FROM range(150000) t(i)) TO '${local}.2' (FORMAT parquet, ROW_GROUP_SIZE 25000)`,
  );
  const file = readFileSync(local);
  const other = readFileSync(`${local}.2`);
  const put = () => sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "t.parquet", Body: file }));
  const etag = (await put()).ETag!;
  const chunkGets = (from: number) =>
    proxy.requests
      .slice(from)
      .filter((q: Recorded) => q.method === "GET" && q.path.endsWith("/t.parquet"))
      .slice(1);
  // The first column chunk's GET waits until another object is stored at the key (another ETag).
  proxy = startRecordingProxy(s3().endpoint, (q) => {
    // A column chunk's range, not the footer's (at the end).
    const start = Number(/bytes=(\d+)-/.exec(q.range ?? "")?.[1] ?? Number.NaN);
    if (
      !replaceOnFirstChunk ||
      q.method !== "GET" ||
      !q.path.endsWith("/t.parquet") ||
      !q.ifMatch ||
      !(start < file.length / 2)
    )
      return undefined;
    replaceOnFirstChunk = false;
    return sdkClient()
      .send(new PutObjectCommand({ Bucket: bucket, Key: "t.parquet", Body: other }))
      .then(() => undefined);
  });
  const { client, close } = await connectBinary({ env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint } });
  try {
    const sql = "SELECT small, count(*) AS n, sum(id) AS s FROM objects GROUP BY small ORDER BY small";
    const from = proxy.requests.length;
    const r = await call(client, "query_objects", { bucket_name: bucket, keys: ["t.parquet"], sql });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.rows_total).toBe(7);
    const gets = chunkGets(from);
    expect(gets.length).toBeGreaterThan(0);
    for (const g of gets) {
      expect(g.ifMatch).toBe(etag);
      expect(g.fromSdk).toBe(false);
    }

    replaceOnFirstChunk = true;
    const failed = await call(client, "query_objects", { bucket_name: bucket, keys: ["t.parquet"], sql });
    expect(failed.isError, textOf(failed)).toBe(true);
    expect(textOf(failed)).toContain("PreconditionFailed");
    expect(textOf(failed)).toContain("t.parquet");
    // The server serves on: the object as it is now.
    const again = await call(client, "query_objects", { bucket_name: bucket, keys: ["t.parquet"], sql });
    expect(again.isError, textOf(again)).toBeFalsy();
    expect(again.structuredContent!.rows_total).toBe(5);

    // A search reads a large object in windows: each after the first pinned, quick, and never past the object's end.
    const log = Buffer.from(
      Array.from({ length: 200_000 }, (_, i) => `line ${i} ${i % 10_000 === 7 ? "needle" : "hay"}\n`).join(""),
    );
    const logTag = (await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "big.log", Body: log }))).ETag!;
    const since = proxy.requests.length;
    const found = await call(client, "search_objects", { bucket_name: bucket, prefix: "big.log", pattern: "needle" });
    expect(found.isError, textOf(found)).toBeFalsy();
    expect(found.structuredContent!.matches.length).toBe(20);
    const windows = proxy.requests.slice(since).filter((q) => q.method === "GET" && q.path.endsWith("/big.log"));
    expect(windows.length).toBeGreaterThan(1);
    for (const w of windows.slice(1)) {
      expect(w.ifMatch).toBe(logTag);
      expect(w.fromSdk).toBe(false);
      expect(Number(/bytes=\d+-(\d+)/.exec(w.range ?? "")?.[1])).toBeLessThan(log.length);
    }
  } finally {
    await close();
  }
}, 120_000);
