/** get_object read mode through an in-memory client against Ceph RGW: ranges, truncation, content kinds, versions. */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PutBucketVersioningCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { randomBytes } from "../helpers/files.ts";
import { connectInMemory } from "../helpers/in-memory.ts";
import { call, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, sdkClient } from "../helpers/s3.ts";

let client: Client;
let bucket: string;
const put = (Key: string, Body: Uint8Array | string, ContentType?: string) =>
  sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body, ...(ContentType ? { ContentType } : {}) }));

beforeAll(async () => {
  bucket = await freshBucket("read");
  client = await connectInMemory();
});
afterAll(() => client.close());

describe("get_object read", () => {
  test("paging always moves on, even with a window smaller than the character at offset: the pages join to the whole text", async () => {
    const text = "a€b😀cü𝄞";
    await put("paging/chars.txt", text, "text/plain; charset=utf-8");
    for (const max of [1, 2, 3, 4, 5]) {
      let offset = 0;
      let joined = "";
      for (let calls = 0; ; calls++) {
        expect(calls, `max ${max}`).toBeLessThan(20);
        const r = await call(client, "get_object", {
          bucket_name: bucket,
          object_key: "paging/chars.txt",
          max_content_size: max,
          offset,
        });
        expect(r.isError, textOf(r)).toBeFalsy();
        const page = r.structuredContent!;
        joined += page.text;
        if (page.next_offset === null || page.next_offset === undefined) break;
        expect(page.next_offset, `max ${max} at ${offset}`).toBeGreaterThan(offset);
        offset = page.next_offset;
      }
      expect(joined, `max ${max}`).toBe(text);
    }
  });

  test("text comes back exactly, with metadata; mode defaults to read", async () => {
    const text = "line one\nlíne twö 😀\n";
    await put("notes/a.txt", text, "text/plain; charset=utf-8");
    const r = await call(client, "get_object", { bucket_name: bucket, object_key: "notes/a.txt" });
    expect(r.isError).toBeFalsy();
    expect(r.content[0]).toEqual({ type: "text", text });
    expect(r.structuredContent).toMatchObject({
      bucket,
      key: "notes/a.txt",
      mode: "read",
      size: Buffer.byteLength(text),
      returned_bytes: Buffer.byteLength(text),
      truncated: false,
      encoding: "utf-8",
      content_type: "text/plain; charset=utf-8",
    });
    expect(r.structuredContent!.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(r.structuredContent!.last_modified).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test("a large object: only max_content_size bytes are requested, with truncated and the total size", async () => {
    const big = "x".repeat(3 * 1024 * 1024);
    await put("big.txt", big, "text/plain");
    const proxy = startRecordingProxy(s3().endpoint);
    const viaProxy = await connectInMemory({}, { endpointUrl: proxy.endpoint });
    try {
      const r = await call(viaProxy, "get_object", {
        bucket_name: bucket,
        object_key: "big.txt",
        max_content_size: 1000,
      });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ size: big.length, returned_bytes: 1000, truncated: true });
      expect((r.content[0] as { text: string }).text).toBe("x".repeat(1000));
      expect(textOf(r)).toContain('mode "download"');
      const gets = proxy.requests.filter((q) => q.method === "GET" && q.path.endsWith("/big.txt"));
      expect(gets.map((g) => g.range)).toEqual(["bytes=0-999"]);
      // Default limit: 1 MiB.
      const d = await call(viaProxy, "get_object", { bucket_name: bucket, object_key: "big.txt" });
      expect(d.structuredContent).toMatchObject({ returned_bytes: 1_048_576, truncated: true });
    } finally {
      await viaProxy.close();
      proxy.stop();
    }
  });

  test("an empty object reads as empty text", async () => {
    await put("empty.txt", new Uint8Array(0), "text/plain");
    const r = await call(client, "get_object", { bucket_name: bucket, object_key: "empty.txt" });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ size: 0, returned_bytes: 0, truncated: false });
  });

  test("an image comes back as image content; other binary as its metadata and how to get it, or with include_binary as an embedded resource", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...randomBytes(64)]);
    await put("pic.png", png, "image/png");
    const img = await call(client, "get_object", { bucket_name: bucket, object_key: "pic.png" });
    expect(img.content[0]).toEqual({ type: "image", mimeType: "image/png", data: Buffer.from(png).toString("base64") });
    const blob = randomBytes(300, 7);
    blob[0] = 0;
    await put("data/blob.bin", blob, "application/octet-stream");
    // By default no bytes: most clients would put the base64 into the model's context as text, some abort on it.
    const meta = await call(client, "get_object", { bucket_name: bucket, object_key: "data/blob.bin" });
    expect(meta.isError).toBeFalsy();
    expect(meta.content.map((c) => c.type)).toEqual(["text"]);
    expect(meta.structuredContent).toMatchObject({
      size: 300,
      content_type: "application/octet-stream",
      encoding: "none",
      returned_bytes: 0,
      truncated: true,
    });
    expect(meta.structuredContent!.next).toContain("include_binary: true");
    expect(textOf(meta)).toContain("Binary content not included");
    expect(JSON.stringify(meta)).not.toContain(Buffer.from(blob).toString("base64").slice(0, 40));
    const bin = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "data/blob.bin",
      include_binary: true,
    });
    expect(bin.content[0]).toEqual({
      type: "resource",
      resource: {
        uri: `s3://${bucket}/data/blob.bin`,
        mimeType: "application/octet-stream",
        blob: Buffer.from(blob).toString("base64"),
      },
    });
    expect(bin.structuredContent).toMatchObject({ encoding: "base64", returned_bytes: 300 });
    const cut = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "data/blob.bin",
      max_content_size: 10,
      include_binary: true,
    });
    expect(cut.structuredContent).toMatchObject({ encoding: "none", returned_bytes: 0, truncated: true });
    expect(textOf(cut)).toContain("binary content omitted");
  });

  test("version_id reads that exact version; an unknown version is a clear error", async () => {
    const vbucket = await freshBucket("versions");
    await sdkClient().send(
      new PutBucketVersioningCommand({ Bucket: vbucket, VersioningConfiguration: { Status: "Enabled" } }),
    );
    const v1 = await sdkClient().send(
      new PutObjectCommand({ Bucket: vbucket, Key: "doc.txt", Body: "first", ContentType: "text/plain" }),
    );
    await sdkClient().send(
      new PutObjectCommand({ Bucket: vbucket, Key: "doc.txt", Body: "second", ContentType: "text/plain" }),
    );
    const latest = await call(client, "get_object", { bucket_name: vbucket, object_key: "doc.txt" });
    expect((latest.content[0] as { text: string }).text).toBe("second");
    const old = await call(client, "get_object", {
      bucket_name: vbucket,
      object_key: "doc.txt",
      version_id: v1.VersionId,
    });
    expect((old.content[0] as { text: string }).text).toBe("first");
    expect(old.structuredContent!.version_id).toBe(v1.VersionId);
    const missing = await call(client, "get_object", {
      bucket_name: vbucket,
      object_key: "doc.txt",
      version_id: "no-such-version-id",
    });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain(`s3://${vbucket}/doc.txt`);
    expect(textOf(missing)).toContain("no-such-version-id");
    expect(textOf(missing)).toContain("without version_id");
  });

  test("a missing key names the object, the code and HTTP status, and suggests list_objects with the prefix", async () => {
    const r = await call(client, "get_object", { bucket_name: bucket, object_key: "notes/missing.txt" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`s3://${bucket}/notes/missing.txt: NoSuchKey, HTTP 404`);
    expect(textOf(r)).toContain('prefix "notes/"');
  });

  test("bad arguments name the parameter and what is allowed; the server keeps serving", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ bucket_name: bucket, object_key: "a", mode: "bogus" }, 'mode must be "read"'],
      [{ bucket_name: bucket, object_key: "a", mode: "download" }, "local_path"],
      [{ bucket_name: bucket, object_key: "a", max_content_size: 0 }, "max_content_size must be at least 1"],
      [{ bucket_name: bucket, object_key: "a", max_content_size: 1.5 }, "max_content_size must be a whole number"],
      [{ bucket_name: bucket, object_key: "a", max_content_size: 99_999_999 }, "at most 10485760"],
      [{ bucket_name: bucket, object_key: "a", local_path: "x.txt" }, 'only used with mode "download"'],
      [{ bucket_name: bucket }, "object_key"],
      [{ bucket_name: bucket, object_key: "a", extra: 1 }, "extra"],
    ];
    for (const [args, expected] of cases) {
      const r = await call(client, "get_object", args);
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain(expected);
    }
    const ok = await call(client, "list_buckets");
    expect(ok.isError).toBeFalsy();
  });
});
