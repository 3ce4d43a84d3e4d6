/**
 * Encryption on writes from the store's configuration (STORE_SSE,
 * STORE_SSE_KMS_KEY_ID), against Ceph RGW with its testing KMS: a bucket
 * whose policy refuses every PutObject without SSE takes the server's writes,
 * and without the setting the same write is refused with an error that says
 * which header such a policy wants and how to set it. Every kind of write —
 * put_object, upload_file (one request, and multipart), copy_object,
 * upload_directory, copy_prefix — is stored under the configured KMS key.
 * (Ceph 16 applies a policy's encryption condition to PutObject only: it
 * refuses CreateMultipartUpload under such a policy whatever it carries, so
 * multipart uploads are checked by what the store recorded, in a bucket
 * without the policy. It stores a copy as its source was, whatever CopyObject
 * asks, so copies are checked by what the server sends; and it cannot copy
 * an encrypted object server-side.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HeadObjectCommand, PutBucketPolicyCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
const KEY_ID = "testkey-1";
let bucket: string;
let open: string;
let dir: string;
let encrypted: Awaited<ReturnType<typeof connectBinary>>;

beforeAll(async () => {
  bucket = await freshBucket("sse");
  open = await freshBucket("sseopen");
  for (const key of ["plain/one.txt", "plain/two.txt"])
    await sdkClient().send(new PutObjectCommand({ Bucket: open, Key: key, Body: key }));
  dir = tempDir("sse");
  writeFileSync(join(dir, "small.txt"), "small and encrypted");
  writeFileSync(join(dir, "big.bin"), randomBytes(12 * MiB, 31));
  for (const name of ["a.txt", "b.txt"]) writeFileSync(join(dir, name), `file ${name}`);
  // What a company's bucket says: no PutObject without SSE-KMS.
  await sdkClient().send(
    new PutBucketPolicyCommand({
      Bucket: bucket,
      Policy: JSON.stringify({
        Version: "2012-10-17",
        Statement: [
          {
            Sid: "DenyUnencrypted",
            Effect: "Deny",
            Principal: "*",
            Action: "s3:PutObject",
            Resource: `arn:aws:s3:::${bucket}/*`,
            Condition: { Null: { "s3:x-amz-server-side-encryption": "true" } },
          },
        ],
      }),
    }),
  );
  encrypted = await connectBinary({
    env: { ...s3Env(), STORE_SSE: "aws:kms", STORE_SSE_KMS_KEY_ID: KEY_ID },
    args: ["--allowed-dir", dir],
  });
}, 60_000);
afterAll(() => encrypted?.close());

async function encryptionOf(key: string, where = bucket) {
  const head = await sdkClient().send(new HeadObjectCommand({ Bucket: where, Key: key }));
  return { sse: head.ServerSideEncryption, key: head.SSEKMSKeyId };
}

test("without STORE_SSE, the policy refuses the write, and the error names the header it wants and the setting", async () => {
  const plain = await connectBinary({ env: s3Env(), args: ["--allowed-dir", dir] });
  try {
    const r = await call(plain.client, "put_object", { bucket_name: bucket, object_key: "plain.txt", content: "x" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("AccessDenied");
    expect(textOf(r)).toContain("x-amz-server-side-encryption");
    expect(textOf(r)).toContain("STORE_SSE=aws:kms");
  } finally {
    await plain.close();
  }
}, 30_000);

test("with STORE_SSE=aws:kms and a key, every kind of write lands, encrypted under that key", async () => {
  const client = encrypted.client;
  const writes: [string, Record<string, unknown>, string, string[]][] = [
    ["put_object", { bucket_name: bucket, object_key: "put.txt", content: "hello" }, bucket, ["put.txt"]],
    [
      "upload_file",
      { local_file_path: "small.txt", bucket_name: bucket, object_key: "up/small.txt" },
      bucket,
      ["up/small.txt"],
    ],
    [
      "upload_directory",
      { local_dir: ".", bucket_name: bucket, prefix: "dir/", include: ["*.txt"] },
      bucket,
      ["dir/a.txt", "dir/b.txt", "dir/small.txt"],
    ],
    ["upload_file", { local_file_path: "big.bin", bucket_name: open, object_key: "up/big.bin" }, open, ["up/big.bin"]],
  ];
  for (const [tool, args, where, keys] of writes) {
    const r = await call(client, tool, args);
    expect(r.isError, `${tool}: ${textOf(r)}`).toBeFalsy();
    for (const key of keys)
      expect(await encryptionOf(key, where), `${tool} ${key}`).toEqual({ sse: "aws:kms", key: KEY_ID });
  }
  // head_object says so too, and the multipart upload's bytes are the file's.
  const head = await call(client, "head_object", { bucket_name: open, object_key: "up/big.bin" });
  expect(head.structuredContent!.encryption).toMatchObject({ algorithm: "aws:kms", kms_key_id: KEY_ID });
  const down = await call(client, "get_object", {
    bucket_name: open,
    object_key: "up/big.bin",
    mode: "download",
    local_path: "down.bin",
  });
  expect(down.isError, textOf(down)).toBeFalsy();
  expect(down.structuredContent!.sha256).toBe(sha256(await Bun.file(join(dir, "big.bin")).bytes()));
  // Copies: Ceph 16 takes CopyObject's encryption headers and stores the copy as its source was, so what is checked
  // here is what the server sends (a recording proxy): every request that makes an object carries them.
  const proxy = startRecordingProxy(s3().endpoint);
  const copier = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint, STORE_SSE: "aws:kms", STORE_SSE_KMS_KEY_ID: KEY_ID },
  });
  try {
    for (const [tool, args] of [
      [
        "copy_object",
        { source_bucket: open, source_key: "plain/one.txt", bucket_name: open, object_key: "copied/one.txt" },
      ],
      ["copy_prefix", { source_bucket: open, source_prefix: "plain/", bucket_name: open, prefix: "plain-copy/" }],
    ] as const) {
      const r = await call(copier.client, tool, args);
      expect(r.isError, `${tool}: ${textOf(r)}`).toBeFalsy();
    }
    const creates = proxy.requests.filter((q) => q.method === "PUT" && /\/(copied|plain-copy)\//.test(q.path));
    expect(creates.map((q) => q.path).sort()).toEqual(
      [`/${open}/copied/one.txt`, `/${open}/plain-copy/one.txt`, `/${open}/plain-copy/two.txt`].sort(),
    );
    for (const q of creates) expect({ sse: q.sse, key: q.sseKey }, q.path).toEqual({ sse: "aws:kms", key: KEY_ID });
  } finally {
    await copier.close();
    proxy.stop();
  }
  // A store that cannot copy an encrypted object server-side (Ceph 16) is named as the reason.
  const copy = await call(client, "copy_object", {
    source_bucket: open,
    source_key: "up/big.bin",
    bucket_name: open,
    object_key: "copied/big.bin",
  });
  expect(copy.isError).toBe(true);
  expect(textOf(copy)).toContain("NotImplemented");
  expect(textOf(copy)).toContain("encrypted");
}, 120_000);

test("a setting the store cannot use is refused at start: an unknown algorithm, a KMS key for AES256", async () => {
  for (const [env, says] of [
    [{ STORE_SSE: "aes" }, 'STORE_SSE: "aes" must be one of AES256, aws:kms, aws:kms:dsse'],
    [{ STORE_SSE: "AES256", STORE_SSE_KMS_KEY_ID: KEY_ID }, "AES256 (SSE-S3) does not use"],
    [{ STORE_SSE_KMS_KEY_ID: KEY_ID }, "STORE_SSE_KMS_KEY_ID is set without STORE_SSE"],
  ] as const) {
    const run = Bun.spawnSync([requireBinary()], { env: { ...s3Env(), ...env }, stdin: "ignore", timeout: 10_000 });
    expect(run.stderr.toString(), JSON.stringify(env)).toContain(says);
  }
});
