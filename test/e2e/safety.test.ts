/** The path fence and read-only mode through the compiled binary, as a client would meet them. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

let client: Client;
let close: () => Promise<void>;
let bucket: string;
let base: string;
let allowed: string;

beforeAll(async () => {
  base = tempDir("e2e-safety");
  allowed = join(base, "allowed");
  mkdirSync(allowed);
  mkdirSync(join(base, "allowed-evil"));
  writeFileSync(join(base, "outside.txt"), "outside secret");
  writeFileSync(join(allowed, "inside.txt"), "inside");
  writeFileSync(join(allowed, "target.txt"), "target must survive");
  symlinkSync(join(allowed, "target.txt"), join(allowed, "link.txt"));
  symlinkSync(join(base, "outside.txt"), join(allowed, "out-link.txt"));
  bucket = await freshBucket("e2esafe");
  ({ client, close } = await connectBinary({ env: s3Env(), args: ["--allowed-dir", allowed], cwd: base }));
  await call(client, "upload_file", { local_file_path: "inside.txt", bucket_name: bucket, object_key: "obj.txt" });
});
afterAll(() => close());

test("uploads from outside the allowed directory are refused", async () => {
  for (const [path, code] of [
    ["../outside.txt", "LocalPathNotAllowed"],
    [join(base, "outside.txt"), "LocalPathNotAllowed"],
    [join(base, "allowed-evil", "x"), "LocalPathNotAllowed"],
    ["out-link.txt", "LocalSymlinkRefused"],
    ["~/.ssh/id_ed25519", "LocalPathNotAllowed"],
  ]) {
    const r = await call(client, "upload_file", { local_file_path: path, bucket_name: bucket, object_key: "stolen" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(code!);
  }
  const listed = await call(client, "list_objects", { bucket_name: bucket });
  expect(listed.structuredContent!.objects.map((o: { key: string }) => o.key)).toEqual(["obj.txt"]);
});

test("downloads cannot land outside; nothing is written there", async () => {
  for (const path of [
    "../planted.txt",
    join(base, "planted.txt"),
    join(base, "allowed-evil", "planted.txt"),
    "out-link.txt",
    "~/.bashrc-planted",
  ]) {
    const r = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "obj.txt",
      mode: "download",
      local_path: path,
      overwrite: true,
    });
    expect(r.isError).toBe(true);
  }
  expect(readdirSync(base).sort()).toEqual(["allowed", "allowed-evil", "outside.txt"]);
  expect(readFileSync(join(base, "outside.txt"), "utf8")).toBe("outside secret");
});

test("overwrite over a symlink replaces the link, never its target", async () => {
  const r = await call(client, "get_object", {
    bucket_name: bucket,
    object_key: "obj.txt",
    mode: "download",
    local_path: "link.txt",
    overwrite: true,
  });
  expect(r.isError).toBeFalsy();
  expect(lstatSync(join(allowed, "link.txt")).isSymbolicLink()).toBe(false);
  expect(readFileSync(join(allowed, "link.txt"), "utf8")).toBe("inside");
  expect(readFileSync(join(allowed, "target.txt"), "utf8")).toBe("target must survive");
});

test("--read-only hides the writing tools from tools/list", async () => {
  const ro = await connectBinary({ env: s3Env(), args: ["--read-only"] });
  try {
    // The job tools stay: read-only mode keeps long reads (downloads, usage, searches).
    expect((await ro.client.listTools()).tools.map((t) => t.name).sort()).toEqual([
      "cancel_job",
      "download_prefix",
      "find_objects",
      "get_bucket_settings",
      "get_object",
      "get_object_tags",
      "head_object",
      "inspect_object",
      "job_status",
      "list_buckets",
      "list_jobs",
      "list_object_versions",
      "list_objects",
      "presign_url",
      "query_objects",
      "search_objects",
      "storage_usage",
    ]);
  } finally {
    await ro.close();
  }
  const roEnv = await connectBinary({ env: { ...s3Env(), STORE_READ_ONLY: "true" } });
  try {
    expect((await roEnv.client.listTools()).tools.length).toBe(17);
  } finally {
    await roEnv.close();
  }
});

test("with a bucket allowlist, keys with '.' or '..' segments are refused before anything is sent (through a normalising proxy)", async () => {
  const other = await freshBucket("e2esafe-other");
  await sdkClient().send(new PutObjectCommand({ Bucket: other, Key: "secret.txt", Body: "another bucket's secret" }));
  const proxy = startRecordingProxy(s3().endpoint);
  const fenced = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint },
    args: ["--bucket", bucket, "--allow-delete"],
  });
  try {
    const sneaky = `x/../../${other}/secret.txt`;
    const calls: [string, Record<string, unknown>][] = [
      ["get_object", { bucket_name: bucket, object_key: sneaky }],
      ["head_object", { bucket_name: bucket, object_key: sneaky }],
      ["put_object", { bucket_name: bucket, object_key: `./${sneaky}`, content: "x" }],
      ["copy_object", { source_bucket: bucket, source_key: sneaky, bucket_name: bucket, object_key: "copy.txt" }],
      ["presign_url", { bucket_name: bucket, object_key: sneaky }],
      ["delete_object", { bucket_name: bucket, object_key: `a/./b/../../${other}/secret.txt` }],
    ];
    for (const [name, args] of calls) {
      const r = await call(fenced.client, name, args);
      expect(r.isError, name).toBe(true);
      expect(textOf(r), name).toContain("UnsafeKey");
      expect(textOf(r), name).not.toContain("another bucket's secret");
    }
    // A resource URI's segments are percent-decoded into the key (URL parsing resolves plain ".." segments first, within the bucket): "%2F.." hides one.
    await expect(
      fenced.client.readResource({ uri: `s3://${bucket}/x%2F..%2F..%2F${other}%2Fsecret.txt` }),
    ).rejects.toThrow(/UnsafeKey/);
    expect(proxy.requests.filter((r) => r.path.includes("secret") || r.path.includes("copy.txt"))).toEqual([]);
    // Dots inside a segment are ordinary keys.
    expect(
      (await call(fenced.client, "put_object", { bucket_name: bucket, object_key: "v1..2/.hidden/a.b", content: "ok" }))
        .isError,
    ).toBeFalsy();
  } finally {
    await fenced.close();
    proxy.stop();
  }
  // Without an allowlist every bucket is reachable anyway: such keys (legal in S3) are sent as they are.
  const open = await connectBinary({ env: s3Env() });
  try {
    const r = await call(open.client, "head_object", { bucket_name: bucket, object_key: "a/./b.txt" });
    expect(textOf(r)).not.toContain("UnsafeKey");
  } finally {
    await open.close();
  }
});
