/**
 * Arguments as real clients send them (issue: the agent CLIs and Python
 * frameworks): Gemini CLI's own `wait_for_previous` and a model's misspelled
 * parameter are ignored and named in the result instead of failing the call;
 * clients that make every parameter required fill in `""`, `null` and
 * defaults that do not apply, and those calls work as if left out.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
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
  bucket = await freshBucket("lenient");
  dir = tempDir("lenient");
  client = await connectInMemory({ allowedDirs: [dir], allowDelete: true });
  expect(
    (await call(client, "put_object", { bucket_name: bucket, object_key: "a.txt", content: "alpha" })).isError,
  ).toBeFalsy();
});
afterAll(() => client.close());

test("an unknown parameter (Gemini CLI's wait_for_previous, a misspelling) is ignored and named: in structuredContent and in the text", async () => {
  const r = await call(client, "get_object", {
    bucket_name: bucket,
    object_key: "a.txt",
    wait_for_previous: true,
    max_size: 10,
  });
  expect(r.isError, textOf(r)).toBeFalsy();
  expect(r.structuredContent).toMatchObject({ text: "alpha", ignored_parameters: ["wait_for_previous", "max_size"] });
  expect(textOf(r)).toContain(
    'Ignored parameter(s) get_object does not take: "wait_for_previous", "max_size". It takes: bucket_name, object_key',
  );
  const none = await call(client, "list_buckets", { verbose: true });
  expect(none.isError).toBeFalsy();
  expect(none.structuredContent!.ignored_parameters).toEqual(["verbose"]);
  // A failing call still says what it ignored; a required parameter given under another name is still missing.
  const wrong = await call(client, "get_object", { bucketName: bucket, object_key: "a.txt" });
  expect(wrong.isError).toBe(true);
  expect(textOf(wrong)).toContain("bucket_name");
  expect(textOf(wrong)).toContain('"bucketName"');
});

test('every optional parameter filled with a neutral value ("", null, its default) works as if left out', async () => {
  const read = await call(client, "get_object", {
    bucket_name: bucket,
    object_key: "a.txt",
    version_id: "",
    mode: "read",
    local_path: "",
    max_content_size: 1048576,
    offset: 0,
    overwrite: false,
  });
  expect(read.isError, textOf(read)).toBeFalsy();
  expect(read.structuredContent!.text).toBe("alpha");
  expect(read.structuredContent!.ignored_parameters).toBeUndefined();
  const download = await call(client, "get_object", {
    bucket_name: bucket,
    object_key: "a.txt",
    version_id: "",
    mode: "download",
    local_path: "a.txt",
    max_content_size: null,
    offset: 0,
    overwrite: false,
  });
  expect(download.isError, textOf(download)).toBeFalsy();
  expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("alpha");
  const listed = await call(client, "list_objects", {
    bucket_name: bucket,
    prefix: "",
    delimiter: "",
    continuation_token: "",
    max_keys: 1000,
  });
  expect(listed.isError, textOf(listed)).toBeFalsy();
  expect(listed.structuredContent!.objects.map((o: { key: string }) => o.key)).toContain("a.txt");
  const put = await call(client, "put_object", {
    bucket_name: bucket,
    object_key: "b.txt",
    content: "beta",
    encoding: "",
    content_type: "",
    cache_control: "",
    storage_class: "",
    if_absent: false,
  });
  expect(put.isError, textOf(put)).toBeFalsy();
  const head = await call(client, "head_object", { bucket_name: bucket, object_key: "b.txt", version_id: "" });
  expect(head.structuredContent).toMatchObject({ size: 4 });
  const copy = await call(client, "copy_object", {
    source_bucket: bucket,
    source_key: "b.txt",
    source_version_id: "",
    bucket_name: bucket,
    object_key: "c.txt",
    metadata_directive: "",
    content_type: "",
    cache_control: "",
    storage_class: "",
  });
  expect(copy.isError, textOf(copy)).toBeFalsy();
  const link = await call(client, "presign_url", {
    bucket_name: bucket,
    object_key: "b.txt",
    method: "",
    version_id: "",
    content_type: "",
    response_content_disposition: "",
  });
  expect(link.isError, textOf(link)).toBeFalsy();
  expect(link.structuredContent!.method).toBe("GET");
  // A read-mode parameter at a value that does mean something in download mode is still refused.
  const refused = await call(client, "get_object", {
    bucket_name: bucket,
    object_key: "a.txt",
    mode: "download",
    local_path: "x.txt",
    offset: 3,
  });
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toContain("offset");
  expect(existsSync(join(dir, "x.txt"))).toBe(false);
});

test('delete_objects: a prefix of "" beside keys is a client\'s filler (the keys are deleted); alone it still means every key', async () => {
  const r = await call(client, "delete_objects", {
    bucket_name: bucket,
    keys: ["c.txt"],
    prefix: "",
    confirm: true,
    dry_run: false,
  });
  expect(r.isError, textOf(r)).toBeFalsy();
  expect(r.structuredContent).toMatchObject({ deleted_count: 1, deleted: ["c.txt"] });
  const all = await call(client, "delete_objects", { bucket_name: bucket, prefix: "" });
  expect(all.structuredContent).toMatchObject({ dry_run: true });
  expect(all.structuredContent!.matched).toBeGreaterThanOrEqual(2);
});

test("the same ignored parameter on the same tool is named once per connection", async () => {
  const first = await call(client, "head_object", {
    bucket_name: bucket,
    object_key: "a.txt",
    wait_for_previous: true,
  });
  expect(textOf(first)).toContain("Ignored parameter(s) head_object does not take");
  const again = await call(client, "head_object", {
    bucket_name: bucket,
    object_key: "a.txt",
    wait_for_previous: true,
  });
  expect(again.isError).toBeFalsy();
  expect(textOf(again)).not.toContain("Ignored parameter");
  expect(again.structuredContent!.ignored_parameters).toBeUndefined();
  // Another one is named again.
  expect(textOf(await call(client, "head_object", { bucket_name: bucket, object_key: "a.txt", verbose: 1 }))).toContain(
    '"verbose"',
  );
});

test("delete_objects: keys [] is a client's filler too (a client that fills every parameter can delete by prefix)", async () => {
  await call(client, "put_object", { bucket_name: bucket, object_key: "filler/1.txt", content: "1" });
  const r = await call(client, "delete_objects", {
    bucket_name: bucket,
    keys: [],
    prefix: "filler/",
    confirm: true,
    dry_run: false,
  });
  expect(r.isError, textOf(r)).toBeFalsy();
  expect(r.structuredContent).toMatchObject({ deleted_count: 1, deleted: ["filler/1.txt"] });
});

test("what a result repeats of ignored parameters is bounded: 20 names of at most 64 characters, and a count", async () => {
  const junk = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`junk_${i}_${"x".repeat(200)}`, i]));
  // A prefix no bucket has: the answer is the note alone, whatever other tests' buckets the store holds.
  const r = await call(client, "list_buckets", { ...junk, prefix: "no-bucket-is-named-so-" });
  expect(r.isError).toBeFalsy();
  const named = r.structuredContent!.ignored_parameters as string[];
  expect(named.length).toBe(20);
  expect(Math.max(...named.map((n) => n.length))).toBe(64);
  expect(textOf(r)).toContain("and 480 more");
  expect(JSON.stringify(r).length).toBeLessThan(10_000);
});
