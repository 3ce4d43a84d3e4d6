/** Local files the sandbox must refuse or handle, through the compiled binary: FIFOs, odd names, hard links. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

let client: Client;
let close: () => Promise<void>;
let base: string;
let allowed: string;
let bucket: string;

beforeAll(async () => {
  base = tempDir("local-files");
  allowed = join(base, "allowed");
  mkdirSync(allowed);
  writeFileSync(join(allowed, "plain.txt"), "plain");
  bucket = await freshBucket("localfiles");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "obj.txt", Body: "from the store" }));
  ({ client, close } = await connectBinary({ env: s3Env(), args: ["--allowed-dir", allowed] }));
});
afterAll(() => close());

test("a FIFO as upload source is refused at once, and later calls still work", async () => {
  Bun.spawnSync(["mkfifo", join(allowed, "pipe")]);
  for (let i = 0; i < 3; i++) {
    const r = await client.callTool(
      { name: "upload_file", arguments: { local_file_path: "pipe", bucket_name: bucket, object_key: `fifo-${i}` } },
      undefined,
      { timeout: 5_000 },
    );
    expect(r.isError).toBe(true);
    expect(textOf(r as never)).toContain("NotARegularFile");
  }
  const up = await call(client, "upload_file", {
    local_file_path: "plain.txt",
    bucket_name: bucket,
    object_key: "plain.txt",
  });
  expect(up.isError).toBeFalsy();
  const down = await call(client, "get_object", {
    bucket_name: bucket,
    object_key: "obj.txt",
    mode: "download",
    local_path: "after-fifo.txt",
  });
  expect(down.isError).toBeFalsy();
}, 30_000);

test("a 255-byte multibyte file name downloads; longer names and symlink loops are clear local errors", async () => {
  const longest = `${"é".repeat(127)}x`; // 255 bytes in UTF-8
  const ok = await call(client, "get_object", {
    bucket_name: bucket,
    object_key: "obj.txt",
    mode: "download",
    local_path: longest,
  });
  expect(textOf(ok)).not.toContain("Error");
  expect(readFileSync(join(allowed, longest), "utf8")).toBe("from the store");

  const tooLong = await call(client, "get_object", {
    bucket_name: bucket,
    object_key: "obj.txt",
    mode: "download",
    local_path: "é".repeat(128),
  });
  expect(tooLong.isError).toBe(true);
  expect(textOf(tooLong)).toContain("InvalidLocalPath");
  expect(textOf(tooLong)).not.toContain("InternalError");

  symlinkSync("loop-b", join(allowed, "loop-a"));
  symlinkSync("loop-a", join(allowed, "loop-b"));
  for (const [tool, args] of [
    [
      "get_object",
      { bucket_name: bucket, object_key: "obj.txt", mode: "download", local_path: "loop-a", overwrite: true },
    ],
    ["get_object", { bucket_name: bucket, object_key: "obj.txt", mode: "download", local_path: "loop-a/x.txt" }],
    ["upload_file", { local_file_path: "loop-a", bucket_name: bucket, object_key: "loop" }],
  ] as const) {
    const r = await call(client, tool, args);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("LocalSymlinkRefused");
    expect(textOf(r)).not.toContain("InternalError");
  }
  expect(readdirSync(allowed).filter((n) => n.endsWith(".partial"))).toEqual([]);
});

test("a file with a second hard link (possibly outside) is not uploaded", async () => {
  writeFileSync(join(base, "outside-secret.txt"), "outside");
  linkSync(join(base, "outside-secret.txt"), join(allowed, "hardlink.txt"));
  const r = await call(client, "upload_file", {
    local_file_path: "hardlink.txt",
    bucket_name: bucket,
    object_key: "hard",
  });
  expect(r.isError).toBe(true);
  expect(textOf(r)).toContain("LocalHardLinkRefused");
});
