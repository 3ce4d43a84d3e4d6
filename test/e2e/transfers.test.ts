/** upload_file and get_object download through the compiled binary against Ceph RGW. */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutBucketVersioningCommand,
} from "@aws-sdk/client-s3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

let client: Client;
let close: () => Promise<void>;
let bucket: string;
let dir: string;

beforeAll(async () => {
  dir = tempDir("transfers");
  bucket = await freshBucket("xfer");
  ({ client, close } = await connectBinary({ env: s3Env(), args: ["--allowed-dir", dir] }));
});
afterAll(() => close());

const noMultipartLeft = async (b: string) =>
  (await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: b }))).Uploads ?? [];

describe("upload_file", () => {
  test("40 MiB goes up in parts and comes back down byte-identical (sha256)", async () => {
    const data = randomBytes(40 * 1024 * 1024, 42);
    writeFileSync(join(dir, "big.bin"), data);
    const up = await call(client, "upload_file", {
      local_file_path: join(dir, "big.bin"),
      bucket_name: bucket,
      object_key: "big/big.bin",
    });
    expect(up.isError).toBeFalsy();
    expect(up.structuredContent).toMatchObject({
      bucket,
      key: "big/big.bin",
      size: data.length,
      content_type: "application/octet-stream",
      storage_class: "STANDARD",
    });
    expect(up.structuredContent!.etag).toMatch(/-\d+"$/); // a multipart ETag
    const down = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "big/big.bin",
      mode: "download",
      local_path: "out/big.bin",
    });
    expect(down.isError).toBeFalsy();
    expect(down.structuredContent).toMatchObject({
      bytes: data.length,
      sha256: sha256(data),
      local_path: join(dir, "out/big.bin"),
      mode: "download",
    });
    expect(sha256(readFileSync(join(dir, "out/big.bin")))).toBe(sha256(data));
    expect(readdirSync(join(dir, "out"))).toEqual(["big.bin"]); // no temp file left
    expect(await noMultipartLeft(bucket)).toEqual([]);
  }, 120_000);

  test("content type: detected from the file name, else the key, else octet-stream; given one wins", async () => {
    writeFileSync(join(dir, "page.html"), "<p>hi</p>");
    writeFileSync(join(dir, "noext"), "plain");
    const cases: [string, string, string | undefined, string][] = [
      ["page.html", "p1", undefined, "text/html"],
      ["noext", "data.json", undefined, "application/json"],
      ["noext", "blob", undefined, "application/octet-stream"],
      ["page.html", "p2", "text/plain", "text/plain"],
    ];
    for (const [file, key, given, expected] of cases) {
      const r = await call(client, "upload_file", {
        local_file_path: file,
        bucket_name: bucket,
        object_key: key,
        ...(given ? { content_type: given } : {}),
      });
      expect(r.structuredContent!.content_type).toBe(expected);
      const head = await sdkClient().send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      expect(head.ContentType).toBe(expected);
    }
  });

  test("cache_control is stored; a 0-byte file uploads", async () => {
    writeFileSync(join(dir, "empty.txt"), "");
    const r = await call(client, "upload_file", {
      local_file_path: "empty.txt",
      bucket_name: bucket,
      object_key: "empty.txt",
      cache_control: "max-age=60",
    });
    expect(r.structuredContent).toMatchObject({ size: 0 });
    const head = await sdkClient().send(new HeadObjectCommand({ Bucket: bucket, Key: "empty.txt" }));
    expect(head.CacheControl).toBe("max-age=60");
    expect(head.ContentLength).toBe(0);
  });

  test("a storage class the store does not offer comes back as a clear error, nothing left behind", async () => {
    writeFileSync(join(dir, "small.txt"), "x");
    writeFileSync(join(dir, "mp.bin"), randomBytes(9 * 1024 * 1024));
    for (const file of ["small.txt", "mp.bin"]) {
      const r = await call(client, "upload_file", {
        local_file_path: file,
        bucket_name: bucket,
        object_key: `sc/${file}`,
        storage_class: "STANDARD_IA",
      });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain(`s3://${bucket}/sc/${file}: InvalidArgument, HTTP 400`);
      expect(textOf(r)).toContain("without storage_class");
    }
    expect(await noMultipartLeft(bucket)).toEqual([]);
  });

  test("a versioned bucket reports the version id", async () => {
    const vb = await freshBucket("xver");
    await sdkClient().send(
      new PutBucketVersioningCommand({ Bucket: vb, VersioningConfiguration: { Status: "Enabled" } }),
    );
    writeFileSync(join(dir, "v.txt"), "v1");
    const r = await call(client, "upload_file", { local_file_path: "v.txt", bucket_name: vb, object_key: "v.txt" });
    expect(r.structuredContent!.version_id).toBeString();
    const got = await sdkClient().send(
      new GetObjectCommand({ Bucket: vb, Key: "v.txt", VersionId: r.structuredContent!.version_id }),
    );
    expect(await got.Body!.transformToString()).toBe("v1");
  });

  test("a missing file or a directory is a clear local error", async () => {
    mkdirSync(join(dir, "a-dir"), { recursive: true });
    const missing = await call(client, "upload_file", {
      local_file_path: "nope.txt",
      bucket_name: bucket,
      object_key: "k",
    });
    expect(textOf(missing)).toContain("nope.txt: LocalFileNotFound");
    const isDir = await call(client, "upload_file", { local_file_path: "a-dir", bucket_name: bucket, object_key: "k" });
    expect(textOf(isDir)).toContain("a-dir: LocalPathIsDirectory");
  });

  test("a missing bucket is NoSuchBucket, and no object or upload appears", async () => {
    writeFileSync(join(dir, "nb.txt"), "x");
    const r = await call(client, "upload_file", {
      local_file_path: "nb.txt",
      bucket_name: "no-such-bucket-here-xyz",
      object_key: "k",
    });
    expect(textOf(r)).toContain("s3://no-such-bucket-here-xyz/k: NoSuchBucket");
  });
});

describe("get_object download", () => {
  test("an existing file is refused and untouched; overwrite: true replaces it", async () => {
    writeFileSync(join(dir, "src.txt"), "from the store");
    await call(client, "upload_file", { local_file_path: "src.txt", bucket_name: bucket, object_key: "dl/src.txt" });
    writeFileSync(join(dir, "existing.txt"), "precious");
    const refused = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "dl/src.txt",
      mode: "download",
      local_path: "existing.txt",
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("existing.txt: LocalFileExists");
    expect(textOf(refused)).toContain("overwrite: true");
    expect(readFileSync(join(dir, "existing.txt"), "utf8")).toBe("precious");
    const replaced = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "dl/src.txt",
      mode: "download",
      local_path: "existing.txt",
      overwrite: true,
    });
    expect(replaced.isError).toBeFalsy();
    expect(readFileSync(join(dir, "existing.txt"), "utf8")).toBe("from the store");
  });

  test("a directory as local_path is an error; a missing object leaves nothing behind", async () => {
    mkdirSync(join(dir, "target-dir"), { recursive: true });
    const isDir = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "dl/src.txt",
      mode: "download",
      local_path: "target-dir",
    });
    expect(textOf(isDir)).toContain("target-dir: LocalPathIsDirectory");
    const missing = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "dl/none.txt",
      mode: "download",
      local_path: "fresh/none.txt",
    });
    expect(textOf(missing)).toContain("NoSuchKey");
    expect(readdirSync(dir)).not.toContain("fresh");
  });
});
