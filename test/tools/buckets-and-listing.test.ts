/** list_buckets, list_objects, create_bucket and delete_bucket through an in-memory client against Ceph RGW. */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { parseListObjectsV2 } from "../../src/storage/requests/list-xml.ts";
import { connectInMemory } from "../helpers/in-memory.ts";
import { call, textOf } from "../helpers/mcp.ts";
import { freshBucket, sdkClient, uniqueBucket } from "../helpers/s3.ts";

let client: Client;
beforeAll(async () => {
  client = await connectInMemory();
});
afterAll(() => client.close());

describe("create_bucket and delete_bucket", () => {
  test("create, see it listed, delete it, see it gone", async () => {
    const bucket = uniqueBucket("cd");
    const created = await call(client, "create_bucket", { bucket_name: bucket });
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent).toMatchObject({ bucket, region: "us-east-1" });
    const listed = await call(client, "list_buckets");
    const entry = listed.structuredContent!.buckets.find((b: { name: string }) => b.name === bucket);
    expect(entry.creation_date).toMatch(/^\d{4}-/);
    expect(textOf(listed)).toContain(bucket);
    const deleted = await call(client, "delete_bucket", { bucket_name: bucket });
    expect(deleted.structuredContent).toEqual({ bucket, deleted: true });
    const after = await call(client, "list_buckets");
    expect(after.structuredContent!.buckets.map((b: { name: string }) => b.name)).not.toContain(bucket);
  });

  test("creating a bucket that exists says so", async () => {
    const bucket = await freshBucket("exists");
    const r = await call(client, "create_bucket", { bucket_name: bucket });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`s3://${bucket}: BucketAlreadyOwnedByYou`);
    expect(textOf(r)).toContain("use the existing bucket");
  });

  test("a name breaking a rule is refused locally, saying which rule", async () => {
    for (const [name, rule] of [
      ["My_Bucket", "uppercase"],
      ["ab", "3 to 63"],
      ["10.0.0.1", "IP address"],
      ["bad..name", "adjacent dots"],
    ]) {
      const r = await call(client, "create_bucket", { bucket_name: name });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("InvalidBucketName");
      expect(textOf(r)).toContain(rule!);
    }
  });

  test("delete_bucket refuses a bucket with objects and deletes none of them", async () => {
    const bucket = await freshBucket("full");
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "keep.txt", Body: "keep" }));
    const r = await call(client, "delete_bucket", { bucket_name: bucket });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("BucketNotEmpty, HTTP 409");
    expect(textOf(r)).toContain("still holds objects");
    const still = await call(client, "list_objects", { bucket_name: bucket });
    expect(still.structuredContent!.objects.map((o: { key: string }) => o.key)).toEqual(["keep.txt"]);
  });

  test("deleting a missing bucket is NoSuchBucket with a pointer to list_buckets", async () => {
    const r = await call(client, "delete_bucket", { bucket_name: uniqueBucket("gone") });
    expect(textOf(r)).toContain("NoSuchBucket, HTTP 404");
    expect(textOf(r)).toContain("list_buckets");
  });
});

describe("list_objects", () => {
  let bucket: string;
  const keys = ["a.txt", "docs/one.md", "docs/two.md", "docs/deep/three.md", "images/x.png"];
  beforeAll(async () => {
    bucket = await freshBucket("list");
    await Promise.all(keys.map((Key) => sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body: Key }))));
  });

  test("all objects with key, size, last_modified, etag, storage_class", async () => {
    const r = await call(client, "list_objects", { bucket_name: bucket });
    expect(r.structuredContent!.objects.map((o: { key: string }) => o.key).sort()).toEqual([...keys].sort());
    expect(r.structuredContent!.objects[0]).toMatchObject({ key: "a.txt", size: 5, storage_class: "STANDARD" });
    expect(r.structuredContent!.objects[0].etag).toMatch(/^"/);
    expect(r.structuredContent!.is_truncated).toBe(false);
    expect(textOf(r)).toContain("End of listing.");
  });

  test("prefix filters; delimiter groups into common_prefixes", async () => {
    const docs = await call(client, "list_objects", { bucket_name: bucket, prefix: "docs/" });
    expect(docs.structuredContent!.objects.length).toBe(3);
    const top = await call(client, "list_objects", { bucket_name: bucket, delimiter: "/" });
    expect(top.structuredContent!.objects.map((o: { key: string }) => o.key)).toEqual(["a.txt"]);
    expect(top.structuredContent!.common_prefixes).toEqual(["docs/", "images/"]);
    const level = await call(client, "list_objects", { bucket_name: bucket, prefix: "docs/", delimiter: "/" });
    expect(level.structuredContent!.common_prefixes).toEqual(["docs/deep/"]);
  });

  test("max_keys pages with a continuation token; the text says how to continue", async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const r = await call(client, "list_objects", {
        bucket_name: bucket,
        max_keys: 2,
        ...(token ? { continuation_token: token } : {}),
      });
      seen.push(...r.structuredContent!.objects.map((o: { key: string }) => o.key));
      token = r.structuredContent!.next_continuation_token ?? undefined;
      if (token) expect(textOf(r)).toContain(`continuation_token "${token}"`);
      pages++;
    } while (token);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual([...keys].sort());
  });

  test("max_keys outside 1-1000 is refused naming the bound", async () => {
    for (const [max, text] of [
      [0, "at least 1"],
      [1001, "at most 1000"],
      [2.5, "whole number"],
    ] as const) {
      const r = await call(client, "list_objects", { bucket_name: bucket, max_keys: max });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain(text);
    }
  });

  // Ten pages, as a 10,000-object bucket's default pages would be, at a quarter of the store's work.
  test("every key of a 2,500-object bucket is reachable by paging, 250 keys a page", async () => {
    const big = await freshBucket("tenk");
    const s3c = sdkClient();
    const all = Array.from({ length: 2_500 }, (_, i) => `k/${String(i).padStart(5, "0")}`);
    for (let i = 0; i < all.length; i += 100) {
      await Promise.all(
        all
          .slice(i, i + 100)
          .map((Key) =>
            s3c.send(new PutObjectCommand({ Bucket: big, Key, Body: new Uint8Array(0), ContentLength: 0 })),
          ),
      );
    }
    const seen = new Set<string>();
    let token: string | undefined;
    let pages = 0;
    do {
      const r = await call(client, "list_objects", {
        bucket_name: big,
        max_keys: 250,
        ...(token ? { continuation_token: token } : {}),
      });
      expect(r.structuredContent!.objects.length).toBeLessThanOrEqual(250);
      for (const o of r.structuredContent!.objects) seen.add(o.key);
      token = r.structuredContent!.next_continuation_token ?? undefined;
      pages++;
    } while (token);
    expect(pages).toBe(10);
    expect(seen.size).toBe(2_500);
  }, 180_000);
});

describe("listing pages read without the SDK's parser (storage/list-xml.ts)", () => {
  test("give exactly what the SDK reads from the same store: XML-special, unicode and spaced keys, folders, every field", async () => {
    const bucket = await freshBucket("xmlkeys");
    const keys = [
      "a&b.txt",
      "<angle>.txt",
      'quote"s',
      "apos'",
      "é café/ünï.txt",
      "😀/x",
      " lead and trail ",
      "tab\there",
      "amp;lt;",
      "dir/sub/deep.txt",
      "dir/one.txt",
    ];
    await Promise.all(
      keys.map((Key, i) => sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body: "x".repeat(i + 1) }))),
    );
    for (const delimiter of [undefined, "/"]) {
      const ours = await call(client, "list_objects", { bucket_name: bucket, ...(delimiter ? { delimiter } : {}) });
      const sdk = await sdkClient().send(
        new ListObjectsV2Command({ Bucket: bucket, ...(delimiter ? { Delimiter: delimiter } : {}) }),
      );
      const expected = (sdk.Contents ?? []).map((o) => ({
        key: o.Key,
        size: o.Size,
        last_modified: o.LastModified?.toISOString(),
        etag: o.ETag,
        storage_class: o.StorageClass,
      }));
      expect(expected.length).toBeGreaterThan(delimiter ? 5 : 10);
      expect(ours.structuredContent!.objects).toEqual(expected);
      expect(ours.structuredContent!.common_prefixes).toEqual((sdk.CommonPrefixes ?? []).map((p) => p.Prefix));
      // And the store's own answer is one the reader takes (not handed back to the SDK's parser).
      const url = await getSignedUrl(
        sdkClient(),
        new ListObjectsV2Command({ Bucket: bucket, ...(delimiter ? { Delimiter: delimiter } : {}) }),
      );
      const raw = parseListObjectsV2(await (await fetch(url)).text());
      expect(raw?.contents.map((o) => o.key)).toEqual(expected.map((o) => o.key!));
    }
  });
});
