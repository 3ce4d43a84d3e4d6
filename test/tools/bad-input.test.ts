/**
 * A data-driven corpus of bad inputs: each must come back as an isError result
 * that names the parameter or the resource, and the server must keep serving.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { tempDir } from "../helpers/files.ts";
import { connectInMemory } from "../helpers/in-memory.ts";
import { call, textOf } from "../helpers/mcp.ts";
import { freshBucket } from "../helpers/s3.ts";

let client: Client;
let bucket: string;
let dir: string;
beforeAll(async () => {
  bucket = await freshBucket("badinput");
  dir = tempDir("badinput");
  writeFileSync(join(dir, "f.txt"), "x");
  client = await connectInMemory({ allowedDirs: [dir] });
});
afterAll(() => client.close());

type Case = [tool: string, args: Record<string, unknown>, mentions: string];
const B = () => bucket;
const long = "x".repeat(5000);
const CASES: (() => Case)[] = [
  // bucket names
  () => ["create_bucket", { bucket_name: "" }, "bucket_name"],
  () => ["create_bucket", { bucket_name: "ab" }, "bucket_name"],
  () => ["create_bucket", { bucket_name: "a".repeat(64) }, "bucket_name"],
  () => ["create_bucket", { bucket_name: "UpperCase" }, "bucket_name"],
  () => ["create_bucket", { bucket_name: "under_score" }, "bucket_name"],
  () => ["create_bucket", { bucket_name: "192.168.0.1" }, "bucket_name"],
  () => ["create_bucket", { bucket_name: "ünïcödé" }, "bucket_name"],
  () => ["create_bucket", { bucket_name: "-leading" }, "bucket_name"],
  () => ["create_bucket", { bucket_name: long }, "bucket_name"],
  () => ["create_bucket", { bucket_name: 42 }, "bucket_name"],
  () => ["create_bucket", {}, "bucket_name"],
  () => ["list_objects", { bucket_name: "" }, "bucket_name"],
  () => ["list_objects", { bucket_name: "has/slash" }, "bucket_name"],
  () => ["list_objects", { bucket_name: "no-such-bucket-for-sure-1" }, "s3://no-such-bucket-for-sure-1"],
  () => ["list_objects", { bucket_name: "UPPER-NOT-THERE" }, "s3://UPPER-NOT-THERE"],
  () => ["delete_bucket", { bucket_name: "" }, "bucket_name"],
  () => ["delete_bucket", { bucket_name: null }, "bucket_name"],
  () => ["delete_bucket", { bucket_name: "no-such-bucket-for-sure-2" }, "s3://no-such-bucket-for-sure-2"],
  // keys
  () => ["get_object", { bucket_name: B(), object_key: "" }, "object_key"],
  () => ["get_object", { bucket_name: B(), object_key: "k".repeat(1025) }, "object_key"],
  () => ["get_object", { bucket_name: B(), object_key: "é".repeat(513) }, "object_key"],
  () => ["get_object", { bucket_name: B(), object_key: "/leading-slash" }, `s3://${B()}//leading-slash`],
  () => ["get_object", { bucket_name: B(), object_key: "../escape" }, `s3://${B()}/../escape`],
  () => ["get_object", { bucket_name: B(), object_key: "trailing/" }, `s3://${B()}/trailing/`],
  () => ["get_object", { bucket_name: B(), object_key: "caf\u00e9" }, `s3://${B()}/caf\u00e9`],
  () => ["get_object", { bucket_name: B(), object_key: "cafe\u0301" }, `s3://${B()}/cafe\u0301`],
  () => ["get_object", { bucket_name: B(), object_key: 7 }, "object_key"],
  () => ["get_object", { bucket_name: B() }, "object_key"],
  () => ["upload_file", { local_file_path: "f.txt", bucket_name: B(), object_key: "" }, "object_key"],
  () => ["upload_file", { local_file_path: "f.txt", bucket_name: B(), object_key: "k".repeat(2000) }, "object_key"],
  // local paths
  () => ["upload_file", { local_file_path: "", bucket_name: B(), object_key: "k" }, "local_file_path"],
  () => [
    "upload_file",
    { local_file_path: "../../etc/passwd", bucket_name: B(), object_key: "k" },
    "LocalPathNotAllowed",
  ],
  () => ["upload_file", { local_file_path: "/etc/passwd", bucket_name: B(), object_key: "k" }, "LocalPathNotAllowed"],
  () => [
    "upload_file",
    { local_file_path: "~/.aws/credentials", bucket_name: B(), object_key: "k" },
    "LocalPathNotAllowed",
  ],
  () => ["upload_file", { local_file_path: "f.txt\u0000.png", bucket_name: B(), object_key: "k" }, "NUL"],
  () => ["upload_file", { local_file_path: "missing.txt", bucket_name: B(), object_key: "k" }, "missing.txt"],
  () => ["upload_file", { local_file_path: ".", bucket_name: B(), object_key: "k" }, "LocalPathIsDirectory"],
  () => ["upload_file", { local_file_path: long, bucket_name: B(), object_key: "k" }, "local_file_path"],
  () => ["upload_file", { local_file_path: ["f.txt"], bucket_name: B(), object_key: "k" }, "local_file_path"],
  () => ["upload_file", { bucket_name: B(), object_key: "k" }, "local_file_path"],
  () => ["get_object", { bucket_name: B(), object_key: "k", mode: "download", local_path: "" }, "local_path"],
  () => [
    "get_object",
    { bucket_name: B(), object_key: "k", mode: "download", local_path: "/etc/cron.d/x" },
    "LocalPathNotAllowed",
  ],
  () => [
    "get_object",
    { bucket_name: B(), object_key: "k", mode: "download", local_path: "../x" },
    "LocalPathNotAllowed",
  ],
  () => ["get_object", { bucket_name: B(), object_key: "k", mode: "download", local_path: "a\u0000b" }, "NUL"],
  // modes
  () => ["get_object", { bucket_name: B(), object_key: "k", mode: "bogus" }, "mode"],
  () => ["get_object", { bucket_name: B(), object_key: "k", mode: "READ" }, "mode"],
  () => ["get_object", { bucket_name: B(), object_key: "k", mode: 1 }, "mode"],
  () => ["get_object", { bucket_name: B(), object_key: "k", mode: "download" }, "local_path"],
  () => ["get_object", { bucket_name: B(), object_key: "k", overwrite: "yes" }, "overwrite"],
  // max_content_size
  () => ["get_object", { bucket_name: B(), object_key: "k", max_content_size: 0 }, "max_content_size"],
  () => ["get_object", { bucket_name: B(), object_key: "k", max_content_size: -5 }, "max_content_size"],
  () => ["get_object", { bucket_name: B(), object_key: "k", max_content_size: 2.5 }, "max_content_size"],
  () => ["get_object", { bucket_name: B(), object_key: "k", max_content_size: 1e12 }, "max_content_size"],
  () => ["get_object", { bucket_name: B(), object_key: "k", max_content_size: "1000" }, "max_content_size"],
  () => ["get_object", { bucket_name: B(), object_key: "k", max_content_size: [1000] }, "max_content_size"],
  // max_keys and other list parameters
  () => ["list_objects", { bucket_name: B(), max_keys: 0 }, "max_keys"],
  () => ["list_objects", { bucket_name: B(), max_keys: 1001 }, "max_keys"],
  () => ["list_objects", { bucket_name: B(), max_keys: -1 }, "max_keys"],
  () => ["list_objects", { bucket_name: B(), max_keys: "10" }, "max_keys"],
  () => ["list_objects", { bucket_name: B(), prefix: long }, "prefix"],
  // upload options
  () => [
    "upload_file",
    { local_file_path: "f.txt", bucket_name: B(), object_key: "k", content_type: "not a type" },
    "content_type",
  ],
  () => [
    "upload_file",
    { local_file_path: "f.txt", bucket_name: B(), object_key: "k", content_type: "text/plain\r\nX-Evil: 1" },
    "content_type",
  ],
  () => [
    "upload_file",
    { local_file_path: "f.txt", bucket_name: B(), object_key: "k", cache_control: "a\nb" },
    "cache_control",
  ],
  // Sent as HTTP headers, which the store's signature check reads as bytes the SDK did not sign: printable ASCII only.
  () => ["put_object", { bucket_name: B(), object_key: "k", content: "x", metadata: { note: "café" } }, "metadata"],
  () => [
    "put_object",
    { bucket_name: B(), object_key: "k", content: "x", content_type: "text/plain; name=ü" },
    "content_type",
  ],
  () => [
    "upload_file",
    { local_file_path: "f.txt", bucket_name: B(), object_key: "k", cache_control: "max-age=60 ✓" },
    "cache_control",
  ],
  () => [
    "copy_object",
    {
      source_bucket: B(),
      source_key: "f.txt",
      bucket_name: B(),
      object_key: "k2",
      metadata_directive: "REPLACE",
      metadata: { note: "naïve" },
    },
    "metadata",
  ],
  () => [
    "upload_file",
    { local_file_path: "f.txt", bucket_name: B(), object_key: "k", storage_class: "standard" },
    "storage_class",
  ],
  // (unknown extra parameters are not errors: they are ignored and named, test/tools/lenient-arguments.test.ts)
];

test(`a corpus of ${CASES.length} bad inputs: each an isError naming the parameter or resource; the server keeps serving`, async () => {
  expect(CASES.length).toBeGreaterThanOrEqual(60);
  const misses: string[] = [];
  for (const make of CASES) {
    const [tool, args, mentions] = make();
    const r = await call(client, tool, args);
    const text = textOf(r);
    if (r.isError !== true || !text.includes(mentions))
      misses.push(
        `${tool} ${JSON.stringify(args).slice(0, 120)} → ${r.isError ? "" : "NOT AN ERROR "}${text.slice(0, 200)}`,
      );
    const alive = await call(client, "list_buckets");
    if (alive.isError) misses.push(`server stopped answering after ${tool}`);
  }
  expect(misses).toEqual([]);
}, 120_000);
