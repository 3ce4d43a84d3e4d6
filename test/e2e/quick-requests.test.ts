/**
 * The quick GET and PUT of small objects (quick-requests.ts) against Ceph RGW. GET: the
 * bytes and headers the SDK's GET would give, for keys the SDK encodes
 * (spaces, unicode, !'()*, +, %, =, &), in path style and virtual-host style;
 * undefined (so the SDK's GET runs and reports) for a changed object, a
 * missing one, a refused signature and anything too big; and a bulk download
 * that uses it once per small object, pinned to the listed ETag. PUT: the
 * object stored with its headers for the same keys; undefined for a body
 * that breaks its Content-MD5, refused credentials, or a client that adds
 * checksums of its own; a directory upload that stores each small file with
 * one such PUT.
 */

import { beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CopyObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { copySource } from "../../src/storage/copy.ts";
import { createS3Storage } from "../../src/storage/index.ts";
import { lazyS3Client } from "../../src/storage/requests/client.ts";
import {
  QUICK_MAX_BYTES,
  quickCopy,
  quickCopyFits,
  quickGet,
  quickGetFits,
  quickPut,
  quickPutFits,
} from "../../src/storage/requests/quick-requests.ts";
import { startFakeS3 } from "../helpers/fake-s3.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { addressedConfig, call, connectBinary, testConfig, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const KEYS = ["plain.txt", "with space/and ü ñ 漢字.bin", "odd!'()*chars+plus%25=eq&amp~.dat", "empty"];
let bucket: string;
const bodies = new Map<string, Uint8Array>();
const etags = new Map<string, string>();

beforeAll(async () => {
  bucket = await freshBucket("quick");
  for (const [i, key] of KEYS.entries()) {
    const body = key === "empty" ? new Uint8Array(0) : randomBytes(1000 + i * 7000, i + 3);
    const out = await sdkClient().send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: body,
        ContentType: "application/x-test",
        CacheControl: "max-age=60",
        Metadata: { origin: "quick-test" },
      }),
    );
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
    const handle = await lazyS3Client(addressedConfig(style))();
    for (const key of KEYS) {
      const body = bodies.get(key)!;
      const listed = { size: body.length, etag: etags.get(key)! };
      expect(quickGetFits(key, listed, undefined)).toBe(true);
      const held = await quickGet(handle, bucket, key, listed as never, stop(), 10_000);
      expect(held, key).toBeDefined();
      expect(md5(held!.bytes), key).toBe(md5(body));
      // The SDK-shaped answer's body is the same bytes.
      const out = held!.output;
      expect(md5(await bytesOf(out)), key).toBe(md5(body));
      expect(out.ETag).toBe(etags.get(key));
      expect(out.ContentType).toBe("application/x-test");
      expect(out.CacheControl).toBe("max-age=60");
      expect(out.Metadata).toEqual({ origin: "quick-test" });
      expect(out.LastModified).toBeInstanceOf(Date);
    }
  });
}

test("quick GET answers undefined, never a wrong body, for a changed, missing or refused object", async () => {
  const handle = await lazyS3Client(testConfig())();
  const key = "plain.txt";
  const body = bodies.get(key)!;
  // The listing showed another ETag (the object was replaced since): If-Match refuses it.
  expect(
    await quickGet(handle, bucket, key, { size: body.length, etag: `"${"0".repeat(32)}"` }, stop(), 10_000),
  ).toBeUndefined();
  // The listing showed another size.
  expect(
    await quickGet(handle, bucket, key, { size: body.length + 1, etag: etags.get(key)! }, stop(), 10_000),
  ).toBeUndefined();
  expect(
    await quickGet(handle, bucket, "no-such-key", { size: 10, etag: etags.get(key)! }, stop(), 10_000),
  ).toBeUndefined();
  const wrong = await lazyS3Client(
    testConfig({
      credentials: { accessKeyId: s3().accessKeyId, secretAccessKey: "wrong-secret-0000000000000000000000000" },
    }),
  )();
  expect(
    await quickGet(wrong, bucket, key, { size: body.length, etag: etags.get(key)! }, stop(), 10_000),
  ).toBeUndefined();
  // Cancelled before it starts.
  const cancelled = new AbortController();
  cancelled.abort();
  expect(
    await quickGet(handle, bucket, key, { size: body.length, etag: etags.get(key)! }, cancelled.signal, 10_000),
  ).toBeUndefined();
});

test("quick GET is only tried for small single-part objects, without a version, without dot segments", () => {
  const md5Etag = `"${"a".repeat(32)}"`;
  expect(quickGetFits("k", { size: QUICK_MAX_BYTES, etag: md5Etag }, undefined)).toBe(true);
  expect(quickGetFits("k", { size: QUICK_MAX_BYTES + 1, etag: md5Etag }, undefined)).toBe(false);
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
  const download = await storage.openObjectDownload({ bucket, key }, undefined, {
    listed: { size: body.length, etag: `"${"0".repeat(32)}"` },
  });
  const chunks: Uint8Array[] = [];
  await download.deliver(async (_offset, pieces) => {
    for (const piece of pieces) download.check?.update(piece);
    chunks.push(...pieces.map((p) => p.slice())); // the download frees its pieces once the sink returns
  });
  download.check?.finish();
  expect(md5(new Uint8Array(Buffer.concat(chunks)))).toBe(md5(body));
  const refused = createS3Storage(
    testConfig({
      credentials: { accessKeyId: s3().accessKeyId, secretAccessKey: "wrong-secret-0000000000000000000000000" },
    }),
  );
  const err = await refused
    .openObjectDownload({ bucket, key }, undefined, { listed: { size: body.length, etag: etags.get(key)! } })
    .catch((e: unknown) => e);
  expect((err as { code?: string }).code).toBe("SignatureDoesNotMatch");
  expect(String((err as Error).message)).toContain("signature was rejected");
});

test("download_prefix fetches each small object with one GET pinned to its listed ETag, and a large one in ranges", async () => {
  const prefixBucket = await freshBucket("quickdl");
  const small = Array.from({ length: 30 }, (_, i) => [`p/s${i}.bin`, randomBytes(500 + i * 100, 50 + i)] as const);
  const large = randomBytes(QUICK_MAX_BYTES + 4096, 99);
  const tags = new Map<string, string>();
  for (const [key, body] of [...small, ["p/large.bin", large] as const])
    tags.set(key, (await sdkClient().send(new PutObjectCommand({ Bucket: prefixBucket, Key: key, Body: body }))).ETag!);
  const proxy = startRecordingProxy(s3().endpoint);
  const dir = tempDir("quickdl");
  const { client, close } = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint },
    args: ["--allowed-dir", dir],
  });
  try {
    const r = await call(client, "download_prefix", {
      bucket_name: prefixBucket,
      prefix: "p/",
      local_dir: join(dir, "out"),
    });
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

const putOf = (key: string, body: Uint8Array, md5Of: Uint8Array = body) => ({
  bucket,
  key: `put/${key}`,
  body,
  md5: createHash("md5").update(md5Of).digest(),
  contentType: "text/x-quick",
  cacheControl: "no-cache",
  storageClass: "STANDARD",
  metadata: { mtime: "1700000000.5", "Mixed-Case": "v" },
});

test("quick PUT stores each object with its headers, whatever its key, and the ETag is its MD5", async () => {
  const handle = await lazyS3Client(testConfig())();
  for (const [i, key] of KEYS.entries()) {
    const body = key === "empty" ? new Uint8Array(0) : randomBytes(2000 + i * 5000, 70 + i);
    const put = putOf(key, body);
    expect(quickPutFits(put)).toBe(true);
    const out = await quickPut(handle, put, undefined, 10_000);
    expect(out, key).toBeDefined();
    expect(out!.ETag).toBe(`"${md5(body)}"`);
    const got = await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: put.key }));
    expect(md5(await got.Body!.transformToByteArray()), key).toBe(md5(body));
    expect(got.ContentType).toBe("text/x-quick");
    expect(got.CacheControl).toBe("no-cache");
    expect(got.Metadata).toEqual({ mtime: "1700000000.5", "mixed-case": "v" });
  }
});

test("quick PUT answers undefined for a body that breaks its MD5, refused credentials, or a client that adds checksums", async () => {
  const handle = await lazyS3Client(testConfig())();
  const body = randomBytes(3000, 80);
  // The store checks Content-MD5 and refuses: nothing stored.
  expect(await quickPut(handle, putOf("bad-md5", body, randomBytes(3000, 81)), undefined, 10_000)).toBeUndefined();
  expect(
    await sdkClient()
      .send(new HeadObjectCommand({ Bucket: bucket, Key: "put/bad-md5" }))
      .catch((e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode),
  ).toBe(404);
  const wrong = await lazyS3Client(
    testConfig({
      credentials: { accessKeyId: s3().accessKeyId, secretAccessKey: "wrong-secret-0000000000000000000000000" },
    }),
  )();
  expect(await quickPut(wrong, putOf("wrong-creds", body), undefined, 10_000)).toBeUndefined();
  // AWS: the SDK adds a CRC32 of its own; such a client always sends its own PutObject.
  const checksummed = await lazyS3Client(testConfig({ checksums: "WHEN_SUPPORTED" }))();
  expect(await quickPut(checksummed, putOf("checksummed", body), undefined, 10_000)).toBeUndefined();
  expect(quickPutFits({ ...putOf("x", body), metadata: { name: "café" } })).toBe(false);
  expect(quickPutFits({ ...putOf("x", body), metadata: { "bad key": "v" } })).toBe(false);
  expect(quickPutFits({ ...putOf("x", body), cacheControl: "line\nbreak" })).toBe(false);
  expect(quickPutFits(putOf("a/./b", body))).toBe(false);
  expect(quickPutFits(putOf("big", randomBytes(QUICK_MAX_BYTES + 1, 82)))).toBe(false);
});

test("upload_directory stores each small file with one quick PUT", async () => {
  const upBucket = await freshBucket("quickup");
  const dir = tempDir("quickup");
  const tree = join(dir, "tree");
  mkdirSync(join(tree, "sub ü"), { recursive: true });
  const files = Array.from({ length: 20 }, (_, i) => [`sub ü/f${i}.txt`, randomBytes(300 + i * 50, 90 + i)] as const);
  for (const [rel, body] of files) writeFileSync(join(tree, rel), body);
  const proxy = startRecordingProxy(s3().endpoint);
  const { client, close } = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint },
    args: ["--allowed-dir", dir],
  });
  try {
    const r = await call(client, "upload_directory", { local_dir: tree, bucket_name: upBucket, prefix: "up/" });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.counts.done).toBe(20);
    for (const [rel, body] of files) {
      const puts = proxy.requests.filter((q) => q.method === "PUT" && q.path === `/${upBucket}/up/${rel}`);
      // The SDK's PutObject carries ?x-id=PutObject; the quick PUT does not.
      expect(puts.map((q) => q.search)).toEqual([""]);
      const got = await sdkClient().send(new GetObjectCommand({ Bucket: upBucket, Key: `up/${rel}` }));
      expect(md5(await got.Body!.transformToByteArray())).toBe(md5(body));
      expect(got.ContentType).toBe("text/plain");
    }
  } finally {
    await close();
    proxy.stop();
  }
}, 60_000);

test("under KMS (an ETag that is no MD5) a quick GET's object is not held to its ETag, and a quick PUT's answer is not either", async () => {
  // Ceph here encrypts nothing: a fake store answers as S3 and MinIO do for an SSE-KMS object.
  const body = new TextEncoder().encode("encrypted at rest");
  const kmsEtag = `"${"c".repeat(32)}"`;
  const fake = await startFakeS3();
  fake.handle((req) => {
    const kms = { etag: kmsEtag, "x-amz-server-side-encryption": "aws:kms", "last-modified": new Date().toUTCString() };
    if (req.method === "PUT") return { status: 200, headers: kms };
    return { status: 200, headers: { ...kms, "content-type": "text/plain" }, body };
  });
  try {
    const config = testConfig({ endpointUrl: fake.endpoint });
    const download = await createS3Storage(config).openObjectDownload({ bucket: "b", key: "secret.txt" }, undefined, {
      listed: { size: body.length, etag: kmsEtag },
    });
    expect(download.check).toBeUndefined(); // nothing to hold it to, as the SDK's GET would say
    expect(fake.requests.filter((r) => r.method === "GET").map((r) => r.query.has("x-id"))).toEqual([false]); // the quick GET answered
    const put = await quickPut(await lazyS3Client(config)(), { ...putOf("kms", body), bucket: "b" }, undefined, 10_000);
    expect(put).toMatchObject({ ETag: kmsEtag, ServerSideEncryption: "aws:kms" });
    const stored = await createS3Storage(config).uploadObject({
      bucket: "b",
      key: "kms.txt",
      size: body.length,
      contentType: "text/plain",
      readAt: async (into, at) => (
        into.set(body.subarray(at, at + into.length)), Math.min(into.length, body.length - at)
      ),
    });
    expect(stored.etag).toBe(kmsEtag);
  } finally {
    await fake.stop();
  }
});

test("quick copy within a store keeps the headers, answers undefined for a changed source, and copy_prefix sends one per small object", async () => {
  const handle = await lazyS3Client(testConfig())();
  const key = KEYS[2]!; // !'()*+%= in the key: the copy source is encoded as the SDK's is
  const listed = { size: bodies.get(key)!.length, etag: etags.get(key)! };
  expect(quickCopyFits({ key }, "copies/x", listed, true, false)).toBe(true);
  expect(quickCopyFits({ key }, "copies/x", listed, false, false)).toBe(false); // REPLACE or a storage class: the SDK's
  expect(quickCopyFits({ key }, "copies/x", listed, true, true)).toBe(false); // if_absent
  expect(quickCopyFits({ key, versionId: "v" }, "copies/x", listed, true, false)).toBe(false);
  const out = await quickCopy(
    handle,
    { copySource: copySource({ bucket, key }), etag: listed.etag, bucket, key: `copies/${key}` },
    undefined,
    10_000,
  );
  // As the store wrote it in the CopyObjectResult (Ceph leaves the quotes off; the SDK passes it on the same way).
  expect(out?.CopyObjectResult?.ETag?.replaceAll('"', "")).toBe(etags.get(key)!.replaceAll('"', ""));
  const got = await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: `copies/${key}` }));
  expect(md5(await got.Body!.transformToByteArray())).toBe(md5(bodies.get(key)!));
  expect(got.ContentType).toBe("application/x-test");
  expect(got.Metadata).toEqual({ origin: "quick-test" });
  // Pinned to the listed ETag as the SDK's CopyObject is (x-amz-copy-source-if-match); Ceph RGW 16 ignores that header on
  // a copy (either way), so what a replaced source does is the store's: here the two paths must agree.
  const staleEtag = `"${"0".repeat(32)}"`;
  const quickStale = await quickCopy(
    handle,
    { copySource: copySource({ bucket, key }), etag: staleEtag, bucket, key: "copies/stale-quick" },
    undefined,
    10_000,
  );
  const sdkStale = await sdkClient()
    .send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: "copies/stale-sdk",
        CopySource: copySource({ bucket, key }),
        CopySourceIfMatch: staleEtag,
        MetadataDirective: "COPY",
      }),
    )
    .then(
      () => "copied",
      () => "refused",
    );
  expect(quickStale === undefined ? "refused" : "copied").toBe(sdkStale);

  const proxy = startRecordingProxy(s3().endpoint);
  const { client, close } = await connectBinary({ env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint } });
  try {
    const r = await call(client, "copy_prefix", {
      source_bucket: bucket,
      source_prefix: "put/",
      bucket_name: bucket,
      prefix: "copied/",
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.counts.done).toBe(KEYS.length);
    for (const k of KEYS) {
      const puts = proxy.requests.filter((q) => q.method === "PUT" && q.path === `/${bucket}/copied/${k}`);
      // The SDK's CopyObject carries ?x-id=CopyObject; the quick copy does not.
      expect(puts.map((q) => q.search)).toEqual([""]);
    }
  } finally {
    await close();
    proxy.stop();
  }
}, 60_000);
