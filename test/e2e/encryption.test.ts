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

/**
 * copy_object and copy_prefix of plain/ to `to`/ in the open bucket, by a server with the store's KMS key and the
 * calls' `extra` arguments, through a recording proxy: the PUTs that made objects there, as sent. (Ceph 16 stores a
 * copy as its source was, whatever CopyObject asks, so what is checked is what the server sends.)
 */
async function copiesAsSent(to: string, extra: Record<string, unknown> = {}) {
  const proxy = startRecordingProxy(s3().endpoint);
  const copier = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint, STORE_SSE: "aws:kms", STORE_SSE_KMS_KEY_ID: KEY_ID },
  });
  try {
    for (const [tool, args] of [
      [
        "copy_object",
        { source_bucket: open, source_key: "plain/one.txt", bucket_name: open, object_key: `${to}/one.txt` },
      ],
      ["copy_prefix", { source_bucket: open, source_prefix: "plain/", bucket_name: open, prefix: `${to}/p/` }],
    ] as const) {
      const r = await call(copier.client, tool, { ...args, ...extra });
      expect(r.isError, `${tool}: ${textOf(r)}`).toBeFalsy();
    }
    return proxy.requests.filter((q) => q.method === "PUT" && q.path.startsWith(`/${open}/${to}/`));
  } finally {
    await copier.close();
    proxy.stop();
  }
}

test("without STORE_SSE, the policy refuses the write, and the error names the header it wants and the setting", async () => {
  const plain = await connectBinary({ env: s3Env(), args: ["--allowed-dir", dir] });
  try {
    const r = await call(plain.client, "put_object", { bucket_name: bucket, object_key: "plain.txt", content: "x" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("AccessDenied");
    expect(textOf(r)).toContain("x-amz-server-side-encryption");
    expect(textOf(r)).toContain("STORE_SSE=aws:kms");
    expect(textOf(r)).toContain('sse "aws:kms"');
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
  // Copies: every request that makes an object carries the store's encryption.
  const creates = await copiesAsSent("copied");
  expect(creates.map((q) => q.path).sort()).toEqual(
    [`/${open}/copied/one.txt`, `/${open}/copied/p/one.txt`, `/${open}/copied/p/two.txt`].sort(),
  );
  for (const q of creates) expect({ sse: q.sse, key: q.sseKey }, q.path).toEqual({ sse: "aws:kms", key: KEY_ID });
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

test("a call's sse and sse_kms_key_id: every kind of write carries them, over the store's default or none", async () => {
  const OTHER_KEY = "testkey-2";
  const sse = { sse: "aws:kms", sse_kms_key_id: OTHER_KEY };
  const plain = await connectBinary({ env: s3Env(), args: ["--allowed-dir", dir] });
  try {
    const writes: [Awaited<ReturnType<typeof connectBinary>>, string, Record<string, unknown>, string, string[]][] = [
      [
        plain,
        "put_object",
        { bucket_name: bucket, object_key: "call/put.txt", content: "hi" },
        bucket,
        ["call/put.txt"],
      ],
      // The call's key over the store's STORE_SSE_KMS_KEY_ID.
      [
        encrypted,
        "put_object",
        { bucket_name: bucket, object_key: "call/over.txt", content: "hi" },
        bucket,
        ["call/over.txt"],
      ],
      [
        plain,
        "upload_directory",
        { local_dir: ".", bucket_name: bucket, prefix: "call/dir/", include: ["a.txt", "b.txt"] },
        bucket,
        ["call/dir/a.txt", "call/dir/b.txt"],
      ],
      [
        plain,
        "upload_file",
        { local_file_path: "big.bin", bucket_name: open, object_key: "call/big.bin" },
        open,
        ["call/big.bin"],
      ],
    ];
    for (const [session, tool, args, where, keys] of writes) {
      const r = await call(session.client, tool, { ...args, ...sse });
      expect(r.isError, `${tool}: ${textOf(r)}`).toBeFalsy();
      for (const key of keys)
        expect(await encryptionOf(key, where), `${tool} ${key}`).toEqual({ sse: "aws:kms", key: OTHER_KEY });
    }
    // sse_kms_key_id alone means aws:kms; a KMS key with AES256 is refused before anything is written.
    const alone = await call(plain.client, "put_object", {
      bucket_name: bucket,
      object_key: "call/alone.txt",
      content: "hi",
      sse_kms_key_id: OTHER_KEY,
    });
    expect(alone.isError, textOf(alone)).toBeFalsy();
    expect(await encryptionOf("call/alone.txt")).toEqual({ sse: "aws:kms", key: OTHER_KEY });
    const wrong = await call(plain.client, "put_object", {
      bucket_name: open,
      object_key: "call/wrong.txt",
      content: "hi",
      sse: "AES256",
      sse_kms_key_id: OTHER_KEY,
    });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toContain("InvalidArgument");
    expect(textOf(wrong)).toContain("sse_kms_key_id");
    const absent = await sdkClient()
      .send(new HeadObjectCommand({ Bucket: open, Key: "call/wrong.txt" }))
      .then(
        () => "there",
        () => "absent",
      );
    expect(absent).toBe("absent");
  } finally {
    await plain.close();
  }
  // Copies (Ceph 16 stores a copy as its source was): what the server sends, the call's key over the store's.
  const creates = await copiesAsSent("callcopy", sse);
  expect(creates.length).toBe(3);
  for (const q of creates) expect({ sse: q.sse, key: q.sseKey }, q.path).toEqual({ sse: "aws:kms", key: OTHER_KEY });
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
