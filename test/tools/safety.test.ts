/** Read-only mode, bucket allowlist and client roots, through a real MCP Client in memory. */

import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createServer } from "../../src/mcp/server.ts";
import { createLogger } from "../../src/runtime/log.ts";
import { createS3Storage } from "../../src/storage/index.ts";
import { tempDir } from "../helpers/files.ts";
import { connectInMemory } from "../helpers/in-memory.ts";
import { call, testConfig, textOf } from "../helpers/mcp.ts";
import { freshBucket } from "../helpers/s3.ts";

describe("read-only mode", () => {
  test("tools that write to the store are absent from tools/list and cannot be called", async () => {
    const client = await connectInMemory({ readOnly: true });
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual([
      "download_prefix",
      "find_objects",
      "get_bucket_settings",
      "get_object",
      "get_object_tags",
      "head_object",
      "inspect_object",
      "list_buckets",
      "list_object_versions",
      "list_objects",
      "presign_url",
      "query_objects",
      "search_objects",
      "storage_usage",
    ]);
    for (const [tool, args] of [
      ["upload_file", { local_file_path: "x", bucket_name: "b", object_key: "k" }],
      ["put_object", { bucket_name: "b", object_key: "k", content: "x" }],
      ["copy_object", { source_bucket: "b", source_key: "k", bucket_name: "b", object_key: "k2" }],
      ["delete_object", { bucket_name: "b", object_key: "k" }],
      ["upload_directory", { local_dir: "x", bucket_name: "b", prefix: "" }],
      ["copy_prefix", { source_bucket: "b", source_prefix: "a/", bucket_name: "b", prefix: "c/" }],
    ] as const) {
      const r = await call(client, tool, args);
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("not found");
    }
    // presign_url stays for GET; a PUT link would let anyone write: refused.
    const put = await call(client, "presign_url", { bucket_name: "b", object_key: "k", method: "PUT" });
    expect(put.isError).toBe(true);
    expect(textOf(put)).toContain("ReadOnlyMode");
    const get = await call(client, "presign_url", { bucket_name: "b", object_key: "k" });
    expect(get.isError).toBeFalsy();
    await client.close();
  });
});

describe("bucket allowlist", () => {
  let allowed: string;
  let other: string;
  let client: Client;
  let dir: string;
  beforeAll(async () => {
    allowed = await freshBucket("allow");
    other = await freshBucket("other");
    dir = tempDir("allowlist");
    writeFileSync(join(dir, "f.txt"), "x");
    client = await connectInMemory({ buckets: [allowed], allowedDirs: [dir] });
  });

  test("list_buckets shows only allowed buckets", async () => {
    const r = await call(client, "list_buckets");
    expect(r.structuredContent!.buckets.map((b: { name: string }) => b.name)).toEqual([allowed]);
  });

  test("every other tool refuses another bucket, naming the allowed ones", async () => {
    const calls: [string, Record<string, unknown>][] = [
      ["list_objects", { bucket_name: other }],
      ["get_object", { bucket_name: other, object_key: "k" }],
      ["get_object", { bucket_name: other, object_key: "k", mode: "download", local_path: "out.txt" }],
      ["upload_file", { local_file_path: "f.txt", bucket_name: other, object_key: "k" }],
      ["create_bucket", { bucket_name: "not-on-the-list" }],
      ["delete_bucket", { bucket_name: other }],
    ];
    for (const [name, args] of calls) {
      const r = await call(client, name, args);
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("BucketNotAllowed");
      expect(textOf(r)).toContain(allowed);
    }
    const ok = await call(client, "upload_file", { local_file_path: "f.txt", bucket_name: allowed, object_key: "k" });
    expect(ok.isError).toBeFalsy();
  });
});

/** A client that declares roots and answers roots/list with whatever `roots` holds now. */
async function clientWithRoots(allowedDirs: string[], roots: { current: string[] }) {
  const cfg = testConfig();
  const server = createServer(
    { region: cfg.region, allowedDirs, cwd: "/", readOnly: false, buckets: [] },
    { storage: createS3Storage(cfg), log: createLogger("off") },
  );
  const client = new Client({ name: "roots-client", version: "1" }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: roots.current.map((d) => ({ uri: pathToFileURL(d).href, name: d })),
  }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(b), client.connect(a)]);
  return client;
}

describe("client roots", () => {
  let bucket: string;
  let base: string;
  beforeAll(async () => {
    bucket = await freshBucket("roots");
    base = tempDir("roots");
    for (const d of ["op/project", "op/other", "elsewhere"]) mkdirSync(join(base, d), { recursive: true });
    for (const f of ["op/project/a.txt", "op/other/b.txt", "elsewhere/c.txt"]) writeFileSync(join(base, f), f);
  });
  const upload = (client: Client, path: string) =>
    call(client, "upload_file", { local_file_path: path, bucket_name: bucket, object_key: "k" });

  test("roots narrow the operator's directories", async () => {
    const client = await clientWithRoots([join(base, "op")], {
      current: [join(base, "op/project"), join(base, "elsewhere")],
    });
    expect((await upload(client, join(base, "op/project/a.txt"))).isError).toBeFalsy();
    expect(textOf(await upload(client, join(base, "op/other/b.txt")))).toContain("LocalPathNotAllowed");
    expect(textOf(await upload(client, join(base, "elsewhere/c.txt")))).toContain("LocalPathNotAllowed");
    // Relative paths start from the first effective directory.
    expect((await upload(client, "a.txt")).isError).toBeFalsy();
    await client.close();
  });

  test("roots changing mid-session take effect after roots/list_changed", async () => {
    const roots = { current: [join(base, "op/project")] };
    const client = await clientWithRoots([], roots);
    expect((await upload(client, join(base, "op/project/a.txt"))).isError).toBeFalsy();
    roots.current = [join(base, "elsewhere")];
    await client.sendRootsListChanged();
    await Bun.sleep(50);
    expect(textOf(await upload(client, join(base, "op/project/a.txt")))).toContain("LocalPathNotAllowed");
    expect((await upload(client, join(base, "elsewhere/c.txt"))).isError).toBeFalsy();
    await client.close();
  });

  test("an empty roots list fails closed, even with configured directories", async () => {
    const client = await clientWithRoots([join(base, "op")], { current: [] });
    const r = await upload(client, join(base, "op/project/a.txt"));
    expect(textOf(r)).toContain("LocalFilesDisabled");
    expect(textOf(r)).toContain("shared none");
    await client.close();
  });

  test("a client without roots gets the configured directories; nothing configured and cwd / → refused with how to allow", async () => {
    const configured = await connectInMemory({ allowedDirs: [join(base, "op")] });
    expect((await upload(configured, join(base, "op/other/b.txt"))).isError).toBeFalsy();
    await configured.close();
    const none = await connectInMemory({ allowedDirs: [], cwd: "/" });
    const r = await upload(none, join(base, "op/other/b.txt"));
    expect(textOf(r)).toContain("LocalFilesDisabled");
    expect(textOf(r)).toContain("--allowed-dir");
    await none.close();
  });
});
