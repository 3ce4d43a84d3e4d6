/**
 * SSE-C from the server's configuration (STORE_SSE_C_KEY, or a key file),
 * against Ceph RGW (`rgw crypt require ssl = false`): every kind of write
 * stores objects under the customer key, and reads, ranged reads,
 * downloads and heads send it, with the integrity checks intact. The store
 * really holds them under that key (a request without it is refused). The
 * key is never a tool argument, never printed, and a link (presign_url),
 * which would need it, is refused.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash, randomBytes as cryptoBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
const KEY = cryptoBytes(32);
const KEY_B64 = KEY.toString("base64");
let bucket: string;
let dir: string;
let keyed: Awaited<ReturnType<typeof connectBinary>>;

/** HEAD as a client without the key, and with it: what the store says each time. */
async function heldUnderKey(key: string): Promise<{ without: string; withKey: string | undefined }> {
  const without = await sdkClient()
    .send(new HeadObjectCommand({ Bucket: bucket, Key: key }))
    .then(
      () => "read",
      (e: { $metadata?: { httpStatusCode?: number } }) => `refused ${e.$metadata?.httpStatusCode}`,
    );
  const withKey = await sdkClient().send(
    new HeadObjectCommand({
      Bucket: bucket,
      Key: key,
      SSECustomerAlgorithm: "AES256",
      SSECustomerKey: KEY_B64,
      SSECustomerKeyMD5: createHash("md5").update(KEY).digest("base64"),
    }),
  );
  return { without, withKey: withKey.SSECustomerAlgorithm };
}

beforeAll(async () => {
  bucket = await freshBucket("ssec");
  dir = tempDir("ssec");
  writeFileSync(join(dir, "small.txt"), "small and keyed");
  writeFileSync(join(dir, "big.bin"), randomBytes(12 * MiB, 47));
  for (const name of ["a.txt", "b.txt"]) writeFileSync(join(dir, name), `file ${name}`);
  // The key from a file (raw bytes), as a secret mount would give it.
  const keyFile = join(tempDir("ssec-key"), "ssec.key");
  writeFileSync(keyFile, KEY);
  keyed = await connectBinary({
    env: { ...s3Env(), STORE_SSE_C_KEY_FILE: keyFile },
    args: ["--allowed-dir", dir],
  });
}, 60_000);
afterAll(() => keyed?.close());

test("every kind of write is stored under the customer key; reads, ranged reads and downloads send it and verify", async () => {
  const client = keyed.client;
  for (const [tool, args, keys] of [
    ["put_object", { bucket_name: bucket, object_key: "put.txt", content: "hello keyed" }, ["put.txt"]],
    ["upload_file", { local_file_path: "big.bin", bucket_name: bucket, object_key: "big.bin" }, ["big.bin"]],
    [
      "upload_directory",
      { local_dir: ".", bucket_name: bucket, prefix: "dir/", include: ["*.txt"] },
      ["dir/a.txt", "dir/b.txt", "dir/small.txt"],
    ],
  ] as const) {
    const r = await call(client, tool, args);
    expect(r.isError, `${tool}: ${textOf(r)}`).toBeFalsy();
    for (const key of keys)
      expect(await heldUnderKey(key), `${tool} ${key}`).toEqual({ without: "refused 400", withKey: "AES256" });
  }
  const read = await call(client, "get_object", { bucket_name: bucket, object_key: "put.txt" });
  expect(textOf(read)).toContain("hello keyed");
  const ranged = await call(client, "get_object", {
    bucket_name: bucket,
    object_key: "big.bin",
    offset: MiB,
    max_content_size: 16,
    include_binary: true,
  });
  expect(ranged.isError, textOf(ranged)).toBeFalsy();
  const head = await call(client, "head_object", { bucket_name: bucket, object_key: "big.bin" });
  expect(head.structuredContent!.encryption).toMatchObject({ customer_algorithm: "AES256" });
  const down = await call(client, "get_object", {
    bucket_name: bucket,
    object_key: "big.bin",
    mode: "download",
    local_path: "down.bin",
  });
  expect(down.isError, textOf(down)).toBeFalsy();
  expect(down.structuredContent!.sha256).toBe(sha256(await Bun.file(join(dir, "big.bin")).bytes()));
  const many = await call(client, "download_prefix", { bucket_name: bucket, prefix: "dir/", local_dir: "back" });
  expect(many.isError, textOf(many)).toBeFalsy();
  expect(await Bun.file(join(dir, "back", "a.txt")).text()).toBe("file a.txt");
  // The key is no argument: a call's sse is refused rather than mixed with it; a link, which would need it, too.
  const sse = await call(client, "put_object", {
    bucket_name: bucket,
    object_key: "sse.txt",
    content: "x",
    sse: "aws:kms",
  });
  expect(textOf(sse)).toContain("customer key");
  const link = await call(client, "presign_url", { bucket_name: bucket, object_key: "put.txt" });
  expect(textOf(link)).toContain("CustomerKeyNeeded");
  expect(keyed.stderr()).not.toContain(KEY_B64);
}, 120_000);

test("a copy within the store sends the key for both sides (Ceph 16 copies no encrypted object: NotImplemented, explained)", async () => {
  const proxy = startRecordingProxy(s3().endpoint);
  const copier = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint, STORE_SSE_C_KEY: KEY_B64 },
  });
  try {
    const small = await call(copier.client, "copy_object", {
      source_bucket: bucket,
      source_key: "put.txt",
      bucket_name: bucket,
      object_key: "copied.txt",
    });
    expect(textOf(small)).toContain("cannot copy an encrypted object");
    const md5 = createHash("md5").update(KEY).digest("base64");
    const copies = proxy.requests.filter((q) => q.method === "PUT" && q.path.endsWith("/copied.txt"));
    expect(copies.length).toBeGreaterThan(0);
    for (const q of copies) expect([q.customerKeyMd5, q.copySourceKeyMd5]).toEqual([md5, md5]);
    // Every request for an object's bytes carried it: the HEAD before the copy too.
    const heads = proxy.requests.filter((q) => q.method === "HEAD" && q.path.endsWith("/put.txt"));
    for (const q of heads) expect(q.customerKeyMd5).toBe(md5);
  } finally {
    await copier.close();
    proxy.stop();
  }
}, 60_000);

test("a server without the key cannot read them: the store's refusal comes back as an error", async () => {
  const plain = await connectBinary({ env: s3Env() });
  try {
    const r = await call(plain.client, "get_object", { bucket_name: bucket, object_key: "put.txt" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("STORE_SSE_C_KEY");
  } finally {
    await plain.close();
  }
}, 30_000);

test("a key the store cannot use is refused at start, and never printed", async () => {
  for (const [env, says] of [
    [{ STORE_SSE_C_KEY: Buffer.alloc(16).toString("base64") }, "an SSE-C key is 32 bytes"],
    [{ STORE_SSE_C_KEY: KEY_B64, STORE_SSE: "aws:kms" }, "STORE_SSE and STORE_SSE_C_KEY are both set"],
    [{ STORE_SSE_C_KEY: KEY_B64, STORE_SSE_C_KEY_FILE: "/nonexistent" }, "give the key one way"],
  ] as const) {
    const run = Bun.spawnSync([requireBinary()], { env: { ...s3Env(), ...env }, stdin: "ignore", timeout: 10_000 });
    const stderr = run.stderr.toString();
    expect(stderr, JSON.stringify(Object.keys(env))).toContain(says);
    expect(stderr).not.toContain(KEY_B64);
  }
});
