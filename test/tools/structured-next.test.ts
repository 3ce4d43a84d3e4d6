/**
 * Claude Code and Codex give the model only JSON.stringify(structuredContent)
 * when a tool declares an output schema: the text blocks, with every "call
 * again with…" hint, are dropped. Every instruction a success text carries
 * has a structured counterpart (`next`), checked here on what such a client
 * would hand its model.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PutBucketVersioningCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { randomBytes } from "../helpers/files.ts";
import { connectInMemory } from "../helpers/in-memory.ts";
import { call } from "../helpers/mcp.ts";
import { freshBucket, sdkClient } from "../helpers/s3.ts";

let client: Client;
let bucket: string;
const put = (Key: string, Body: string | Uint8Array, ContentType: string) =>
  sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body, ContentType }));

beforeAll(async () => {
  bucket = await freshBucket("next");
  await sdkClient().send(
    new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: "Enabled" } }),
  );
  await put("a.txt", "alpha beta gamma", "text/plain");
  await put("b.bin", randomBytes(100, 2), "application/octet-stream");
  await put("huge.bin", randomBytes(11 * 1024 * 1024, 3), "application/octet-stream");
  client = await connectInMemory({ allowDelete: true });
}, 60_000);
afterAll(() => client.close());

/** What Claude Code hands its model for a tool with an output schema. */
async function modelSees(
  name: string,
  args: Record<string, unknown>,
): Promise<{ next?: string } & Record<string, unknown>> {
  const r = await call(client, name, args);
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  return JSON.parse(JSON.stringify(r.structuredContent));
}

test("paging: list_objects, list_object_versions and a truncated text read say what to call next", async () => {
  const page = await modelSees("list_objects", { bucket_name: bucket, max_keys: 1 });
  expect(page.next).toContain(`continuation_token "${page.next_continuation_token}"`);
  expect((await modelSees("list_objects", { bucket_name: bucket })).next).toBeUndefined();
  const versions = await modelSees("list_object_versions", { bucket_name: bucket, max_keys: 1 });
  expect(versions.next).toContain(`key_marker "${versions.next_key_marker}"`);
  const window = await modelSees("get_object", { bucket_name: bucket, object_key: "a.txt", max_content_size: 5 });
  expect(window.next).toContain(`offset ${window.next_offset}`);
  expect((await modelSees("get_object", { bucket_name: bucket, object_key: "a.txt" })).next).toBeUndefined();
});

test("a truncated binary read names what can help: a larger max_content_size only when one could hold it, else download or presign_url", async () => {
  const small = await modelSees("get_object", {
    bucket_name: bucket,
    object_key: "b.bin",
    max_content_size: 10,
    include_binary: true,
  });
  expect(small.next).toContain("max_content_size 100");
  const huge = await modelSees("get_object", {
    bucket_name: bucket,
    object_key: "huge.bin",
    max_content_size: 10 * 1024 * 1024,
    include_binary: true,
  });
  expect(huge.next).not.toContain("max_content_size");
  expect(huge.next).toContain('mode "download"');
  expect(huge.next).toContain("presign_url");
});

test("deletes: a dry run says how to confirm; a delete marker says how to restore", async () => {
  const dry = await modelSees("delete_objects", { bucket_name: bucket, keys: ["a.txt"] });
  expect(dry.next).toContain("confirm: true");
  const marker = await modelSees("delete_object", { bucket_name: bucket, object_key: "b.bin" });
  expect(marker.next).toContain("to restore");
  expect(marker.next).toContain(String(marker.version_id));
});
