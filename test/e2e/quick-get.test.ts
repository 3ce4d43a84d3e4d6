/**
 * The quick GET of small listed objects (quick-get.ts) against Ceph RGW: the
 * bytes and headers the SDK's GET would give, for keys the SDK encodes
 * (spaces, unicode, !'()*, +, %, =, &), in path style and virtual-host style;
 * undefined (so the SDK's GET runs and reports) for a changed object, a
 * missing one, a refused signature and anything too big; and a bulk download
 * that uses it once per small object, pinned to the listed ETag.
 */
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { call, connectBinary, testConfig, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";
import { lazyS3Client } from "../../src/storage/client.ts";
import { createS3Storage } from "../../src/storage/index.ts";
import { QUICK_GET_MAX_BYTES, quickGet, quickGetFits } from "../../src/storage/quick-get.ts";

const KEYS = ["plain.txt", "with space/and ü ñ 漢字.bin", "odd!'()*chars+plus%25=eq&amp~.dat", "empty"];
let bucket: string;
const bodies = new Map<string, Uint8Array>();
const etags = new Map<string, string>();

beforeAll(async () => {
  bucket = await freshBucket("quick");
  for (const [i, key] of KEYS.entries()) {
    const body = key === "empty" ? new Uint8Array(0) : randomBytes(1000 + i * 7000, i + 3);
    const out = await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: "application/x-test", CacheControl: "max-age=60", Metadata: { origin: "quick-test" } }));
    bodies.set(key, body);
    etags.set(key, out.ETag!);
  }
}, 60_000);

const md5 = (b: Uint8Array) => createHash("md5").update(b).digest("hex");
const stop = () => new AbortController().signal;

async function bytesOf(out: { Body?: unknown }): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const c of out.Body as AsyncIterable<Uint8Array>) chunks.push(c);
  return new Uint8Array(Buffer.concat(chunks));
}

for (const style of ["path", "virtual-host"] as const) {
  test(`quick GET (${style} style) gives each object's bytes and headers, whatever its key`, async () => {
    const config = style === "path" ? testConfig() : testConfig({ forcePathStyle: false, endpointUrl: s3().endpoint.replace("127.0.0.1", "localhost") });
    const handle = await lazyS3Client(config)();
    for (const key of KEYS) {
      const body = bodies.get(key)!;
      const listed = { size: body.length, etag: etags.get(key)! };
      expect(quickGetFits(key, listed, undefined)).toBe(true);
      const out = await quickGet(handle, bucket, key, listed as never, stop(), 10_000);
      expect(out, key).toBeDefined();
      const got = await bytesOf(out!);
      expect(md5(got), key).toBe(md5(body));
      expect(out!.ETag).toBe(etags.get(key));
      expect(out!.ContentType).toBe("application/x-test");
      expect(out!.CacheControl).toBe("max-age=60");
      expect(out!.Metadata).toEqual({ origin: "quick-test" });
      expect(out!.LastModified).toBeInstanceOf(Date);
    }
  });
}

test("quick GET answers undefined, never a wrong body, for a changed, missing or refused object", async () => {
  const handle = await lazyS3Client(testConfig())();
  const key = "plain.txt";
  const body = bodies.get(key)!;
  // The listing showed another ETag (the object was replaced since): If-Match refuses it.
  expect(await quickGet(handle, bucket, key, { size: body.length, etag: `"${"0".repeat(32)}"` }, stop(), 10_000)).toBeUndefined();
  // The listing showed another size.
  expect(await quickGet(handle, bucket, key, { size: body.length + 1, etag: etags.get(key)! }, stop(), 10_000)).toBeUndefined();
  expect(await quickGet(handle, bucket, "no-such-key", { size: 10, etag: etags.get(key)! }, stop(), 10_000)).toBeUndefined();
  const wrong = await lazyS3Client(testConfig({ credentials: { accessKeyId: s3().accessKeyId, secretAccessKey: "wrong-secret-0000000000000000000000000" } }))();
  expect(await quickGet(wrong, bucket, key, { size: body.length, etag: etags.get(key)! }, stop(), 10_000)).toBeUndefined();
  // Cancelled before it starts.
  const cancelled = new AbortController();
  cancelled.abort();
  expect(await quickGet(handle, bucket, key, { size: body.length, etag: etags.get(key)! }, cancelled.signal, 10_000)).toBeUndefined();
});

test("quick GET is only tried for small single-part objects, without a version, without dot segments", () => {
  const md5Etag = `"${"a".repeat(32)}"`;
  expect(quickGetFits("k", { size: QUICK_GET_MAX_BYTES, etag: md5Etag }, undefined)).toBe(true);
  expect(quickGetFits("k", { size: QUICK_GET_MAX_BYTES + 1, etag: md5Etag }, undefined)).toBe(false);
  expect(quickGetFits("k", { size: 10, etag: `"${"a".repeat(32)}-3"` }, undefined)).toBe(false); // multipart: no MD5 to check
  expect(quickGetFits("k", { size: 10, etag: null }, undefined)).toBe(false);
  expect(quickGetFits("k", { size: 10, etag: md5Etag }, "v1")).toBe(false);
  expect(quickGetFits("a/../k", { size: 10, etag: md5Etag }, undefined)).toBe(false);
  expect(quickGetFits("k", undefined, undefined)).toBe(false);
});

test("a download whose quick GET is refused still comes back through the SDK, or fails with the store's error", async () => {
  const storage = createS3Storage(testConfig());
  const key = "plain.txt";
  const body = bodies.get(key)!;
  // Listed with a stale ETag: the quick GET is refused (412), the SDK's GET fetches the object as it is now.
  const download = await storage.openObjectDownload({ bucket, key }, undefined, undefined, { size: body.length, etag: `"${"0".repeat(32)}"` });
  const chunks: Uint8Array[] = [];
  await download.deliver(async (_offset, pieces) => {
    for (const piece of pieces) download.check?.update(piece);
    chunks.push(...pieces.map((p) => p.slice())); // the download frees its pieces once the sink returns
  });
  download.check?.finish();
  expect(md5(new Uint8Array(Buffer.concat(chunks)))).toBe(md5(body));
  const refused = createS3Storage(testConfig({ credentials: { accessKeyId: s3().accessKeyId, secretAccessKey: "wrong-secret-0000000000000000000000000" } }));
  const err = await refused.openObjectDownload({ bucket, key }, undefined, undefined, { size: body.length, etag: etags.get(key)! }).catch((e: unknown) => e);
  expect((err as { code?: string }).code).toBe("SignatureDoesNotMatch");
  expect(String((err as Error).message)).toContain("signature was rejected");
});

test("download_prefix fetches each small object with one GET pinned to its listed ETag, and a large one in ranges", async () => {
  const prefixBucket = await freshBucket("quickdl");
  const small = Array.from({ length: 30 }, (_, i) => [`p/s${i}.bin`, randomBytes(500 + i * 100, 50 + i)] as const);
  const large = randomBytes(QUICK_GET_MAX_BYTES + 4096, 99);
  const tags = new Map<string, string>();
  for (const [key, body] of [...small, ["p/large.bin", large] as const]) tags.set(key, (await sdkClient().send(new PutObjectCommand({ Bucket: prefixBucket, Key: key, Body: body }))).ETag!);
  const proxy = startRecordingProxy(s3().endpoint);
  const dir = tempDir("quickdl");
  const { client, close } = await connectBinary({ env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint }, args: ["--allowed-dir", dir] });
  try {
    const r = await call(client, "download_prefix", { bucket_name: prefixBucket, prefix: "p/", local_dir: join(dir, "out") });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.counts.done).toBe(31);
    for (const [key, body] of small) {
      expect(md5(readFileSync(join(dir, "out", key.slice(2))))).toBe(md5(body));
      const gets = proxy.requests.filter((q) => q.method === "GET" && q.path === `/${prefixBucket}/${key}`);
      expect(gets.map((g) => [g.range, g.ifMatch])).toEqual([[null, tags.get(key)!]]);
    }
    expect(md5(readFileSync(join(dir, "out", "large.bin")))).toBe(md5(large));
    const largeGets = proxy.requests.filter((q) => q.method === "GET" && q.path === `/${prefixBucket}/p/large.bin`);
    expect(largeGets.length).toBeGreaterThan(0);
    expect(largeGets.every((g) => g.range !== null)).toBe(true);
  } finally {
    await close();
    proxy.stop();
  }
}, 60_000);
