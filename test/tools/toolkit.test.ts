/** The object toolkit against Ceph RGW, through a real MCP Client in memory. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GetObjectCommand, HeadObjectCommand, PutBucketVersioningCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { randomBytes, sha256 } from "../helpers/files.ts";
import { connectInMemory } from "../helpers/in-memory.ts";
import { call, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
let client: Client;
let bucket: string;
let other: string;
let versioned: string;

async function body(b: string, key: string, versionId?: string): Promise<string> {
  const out = await sdkClient().send(
    new GetObjectCommand({ Bucket: b, Key: key, ...(versionId ? { VersionId: versionId } : {}) }),
  );
  return out.Body!.transformToString();
}
async function exists(b: string, key: string): Promise<boolean> {
  return sdkClient()
    .send(new HeadObjectCommand({ Bucket: b, Key: key }))
    .then(
      () => true,
      () => false,
    );
}

beforeAll(async () => {
  bucket = await freshBucket("kit");
  other = await freshBucket("kit2");
  versioned = await freshBucket("kitv");
  await sdkClient().send(
    new PutBucketVersioningCommand({ Bucket: versioned, VersioningConfiguration: { Status: "Enabled" } }),
  );
  client = await connectInMemory({ allowDelete: true }, { multipartCopyThreshold: 12 * MiB });
}, 60_000);
afterAll(() => client.close());

describe("put_object and head_object", () => {
  test("text and base64 round-trip; type from the key; metadata and headers are kept and shown by head_object", async () => {
    const put = await call(client, "put_object", {
      bucket_name: bucket,
      object_key: "notes/a.json",
      content: '{"é": 1}',
      metadata: { author: "ana" },
      cache_control: "max-age=60",
    });
    expect(put.isError).toBeFalsy();
    expect(put.structuredContent!.content_type).toBe("application/json");
    expect(put.structuredContent!.size).toBe(Buffer.byteLength('{"é": 1}'));
    const head = await call(client, "head_object", { bucket_name: bucket, object_key: "notes/a.json" });
    expect(head.structuredContent).toMatchObject({
      size: 9,
      content_type: "application/json",
      cache_control: "max-age=60",
      metadata: { author: "ana" },
      delete_marker: false,
    });
    expect(await body(bucket, "notes/a.json")).toBe('{"é": 1}');

    const bytes = randomBytes(3000, 7);
    const bin = await call(client, "put_object", {
      bucket_name: bucket,
      object_key: "bin/noext",
      content: Buffer.from(bytes).toString("base64"),
      encoding: "base64",
    });
    expect(bin.structuredContent!.content_type).toBe("application/octet-stream");
    const back = await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: "bin/noext" }));
    expect(sha256(await back.Body!.transformToByteArray())).toBe(sha256(bytes));
    const plain = await call(client, "put_object", { bucket_name: bucket, object_key: "readme", content: "hi" });
    expect(plain.structuredContent!.content_type).toBe("text/plain; charset=utf-8");
  });

  test("invalid base64 and oversized content are errors and store nothing", async () => {
    const bad = await call(client, "put_object", {
      bucket_name: bucket,
      object_key: "bad.bin",
      content: "not base64!!",
      encoding: "base64",
    });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("InvalidBase64");
    const big = await call(client, "put_object", {
      bucket_name: bucket,
      object_key: "big.txt",
      content: "x".repeat(4 * MiB + 1),
    });
    expect(big.isError).toBe(true);
    expect(await exists(bucket, "bad.bin")).toBe(false);
    expect(await exists(bucket, "big.txt")).toBe(false);
  });

  test("if_absent never replaces an existing object", async () => {
    await call(client, "put_object", { bucket_name: bucket, object_key: "once.txt", content: "first" });
    const again = await call(client, "put_object", {
      bucket_name: bucket,
      object_key: "once.txt",
      content: "second",
      if_absent: true,
    });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toContain("PreconditionFailed");
    expect(await body(bucket, "once.txt")).toBe("first");
    const fresh = await call(client, "put_object", {
      bucket_name: bucket,
      object_key: "fresh.txt",
      content: "new",
      if_absent: true,
    });
    expect(fresh.isError).toBeFalsy();
  });

  test("head_object of a delete marker says so", async () => {
    await call(client, "put_object", { bucket_name: versioned, object_key: "gone.txt", content: "v1" });
    const del = await call(client, "delete_object", { bucket_name: versioned, object_key: "gone.txt" });
    const head = await call(client, "head_object", {
      bucket_name: versioned,
      object_key: "gone.txt",
      version_id: del.structuredContent!.version_id,
    });
    expect(head.isError).toBeFalsy();
    expect(head.structuredContent!.delete_marker).toBe(true);
  });
});

describe("copy_object", () => {
  test("across buckets, keeping metadata (COPY) or replacing it (REPLACE)", async () => {
    await call(client, "put_object", {
      bucket_name: bucket,
      object_key: "src.txt",
      content: "copy me",
      metadata: { tag: "one" },
    });
    const kept = await call(client, "copy_object", {
      source_bucket: bucket,
      source_key: "src.txt",
      bucket_name: other,
      object_key: "dst/kept.txt",
    });
    expect(kept.isError).toBeFalsy();
    expect(kept.structuredContent!.multipart).toBe(false);
    expect(
      (await call(client, "head_object", { bucket_name: other, object_key: "dst/kept.txt" })).structuredContent!
        .metadata,
    ).toEqual({ tag: "one" });
    const replaced = await call(client, "copy_object", {
      source_bucket: bucket,
      source_key: "src.txt",
      bucket_name: other,
      object_key: "dst/new.txt",
      metadata_directive: "REPLACE",
      content_type: "text/markdown",
      metadata: { tag: "two" },
    });
    const head = (await call(client, "head_object", { bucket_name: other, object_key: "dst/new.txt" }))
      .structuredContent!;
    expect(replaced.isError).toBeFalsy();
    expect(head.metadata).toEqual({ tag: "two" });
    expect(head.content_type).toBe("text/markdown");
    expect(await body(other, "dst/new.txt")).toBe("copy me");
  });

  test("above the threshold it copies in parts, byte-identical, keeping the content type", async () => {
    const bytes = randomBytes(13 * MiB + 123, 11);
    await sdkClient().send(
      new PutObjectCommand({ Bucket: bucket, Key: "large.bin", Body: bytes, ContentType: "application/x-test" }),
    );
    const updates: { progress: number; total?: number }[] = [];
    const r = (await client.callTool(
      {
        name: "copy_object",
        arguments: { source_bucket: bucket, source_key: "large.bin", bucket_name: other, object_key: "large-copy.bin" },
      },
      undefined,
      { onprogress: (p) => updates.push(p) },
    )) as Awaited<ReturnType<typeof call>>;
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent!.multipart).toBe(true);
    // Progress with a token: the object's size as total, bytes copied so far.
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates.every((u) => u.total === bytes.length && u.progress <= bytes.length)).toBe(true);
    const out = await sdkClient().send(new GetObjectCommand({ Bucket: other, Key: "large-copy.bin" }));
    expect(out.ContentType).toBe("application/x-test");
    expect(sha256(await out.Body!.transformToByteArray())).toBe(sha256(bytes));
  }, 60_000);

  test("a source version; if_absent; a missing source is NoSuchKey naming it", async () => {
    const v1 = (await call(client, "put_object", { bucket_name: versioned, object_key: "doc.txt", content: "one" }))
      .structuredContent!.version_id;
    await call(client, "put_object", { bucket_name: versioned, object_key: "doc.txt", content: "two" });
    const r = await call(client, "copy_object", {
      source_bucket: versioned,
      source_key: "doc.txt",
      source_version_id: v1,
      bucket_name: bucket,
      object_key: "restored.txt",
    });
    expect(await body(bucket, "restored.txt")).toBe("one");
    expect(r.structuredContent!.source_version_id).toBe(v1);
    const blocked = await call(client, "copy_object", {
      source_bucket: versioned,
      source_key: "doc.txt",
      bucket_name: bucket,
      object_key: "restored.txt",
      if_absent: true,
    });
    expect(blocked.isError).toBe(true);
    expect(await body(bucket, "restored.txt")).toBe("one");
    const missing = await call(client, "copy_object", {
      source_bucket: bucket,
      source_key: "nope.txt",
      bucket_name: bucket,
      object_key: "x.txt",
    });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/NotFound|NoSuchKey/);
  });
});

describe("delete_object and list_object_versions", () => {
  test("unversioned: gone; versioned: a delete marker that the result explains; with version_id: permanent", async () => {
    await call(client, "put_object", { bucket_name: bucket, object_key: "del.txt", content: "x" });
    const plain = await call(client, "delete_object", { bucket_name: bucket, object_key: "del.txt" });
    expect(plain.structuredContent!.permanent).toBe(true);
    expect(await exists(bucket, "del.txt")).toBe(false);

    const v1 = (await call(client, "put_object", { bucket_name: versioned, object_key: "keep.txt", content: "v1" }))
      .structuredContent!.version_id;
    const marker = await call(client, "delete_object", { bucket_name: versioned, object_key: "keep.txt" });
    expect(marker.structuredContent!.delete_marker).toBe(true);
    expect(textOf(marker)).toContain("restore");
    expect(await body(versioned, "keep.txt", v1)).toBe("v1");
    const listed = await call(client, "list_object_versions", { bucket_name: versioned, prefix: "keep.txt" });
    expect(listed.structuredContent!.versions.map((v: { is_delete_marker: boolean }) => v.is_delete_marker)).toEqual([
      true,
      false,
    ]);
    const gone = await call(client, "delete_object", {
      bucket_name: versioned,
      object_key: "keep.txt",
      version_id: v1,
    });
    expect(gone.structuredContent!.permanent).toBe(true);
    expect(
      await body(versioned, "keep.txt", v1).then(
        () => "still there",
        () => "gone",
      ),
    ).toBe("gone");
  });

  test("every version of a 1,000-version bucket is reachable by paging, at most 250 a page", async () => {
    const b = await freshBucket("kitvers");
    const s3 = sdkClient();
    await s3.send(new PutBucketVersioningCommand({ Bucket: b, VersioningConfiguration: { Status: "Enabled" } }));
    const jobs = Array.from(
      { length: 1000 },
      (_, i) => () => s3.send(new PutObjectCommand({ Bucket: b, Key: `k${i % 3}`, Body: String(i) })),
    );
    for (let i = 0; i < jobs.length; i += 50) await Promise.all(jobs.slice(i, i + 50).map((j) => j()));
    const seen = new Set<string>();
    let markers: Record<string, string> = {};
    // Ceph RGW pages unevenly (112 to 726 entries for max_keys 1000): follow the markers to the end, counting pages.
    let done = false;
    let pages = 0;
    for (; pages < 100 && !done; pages++) {
      const r = await call(client, "list_object_versions", { bucket_name: b, max_keys: 250, ...markers });
      expect(r.structuredContent!.versions.length).toBeLessThanOrEqual(250);
      for (const v of r.structuredContent!.versions) seen.add(`${v.key}/${v.version_id}`);
      done = !r.structuredContent!.is_truncated;
      markers = {
        key_marker: r.structuredContent!.next_key_marker,
        version_id_marker: r.structuredContent!.next_version_id_marker,
      };
    }
    expect(done).toBe(true);
    expect(pages).toBeGreaterThanOrEqual(4);
    expect(seen.size).toBe(1000);
  }, 120_000);
});

describe("delete_objects", () => {
  test("a dry run by default, then deletion with confirm, bounded by max_objects", async () => {
    for (let i = 0; i < 7; i++)
      await call(client, "put_object", { bucket_name: bucket, object_key: `batch/${i}.txt`, content: String(i) });
    const dry = await call(client, "delete_objects", { bucket_name: bucket, prefix: "batch/" });
    expect(dry.structuredContent).toMatchObject({ dry_run: true, matched: 7, deleted_count: 0 });
    expect(dry.structuredContent!.sample.length).toBe(7);
    expect(await exists(bucket, "batch/0.txt")).toBe(true);
    const some = await call(client, "delete_objects", {
      bucket_name: bucket,
      prefix: "batch/",
      confirm: true,
      max_objects: 5,
    });
    expect(some.structuredContent).toMatchObject({ dry_run: false, deleted_count: 5, more_remaining: true });
    const rest = await call(client, "delete_objects", {
      bucket_name: bucket,
      keys: ["batch/5.txt", "batch/6.txt"],
      confirm: true,
    });
    expect(rest.structuredContent!.deleted.sort()).toEqual(["batch/5.txt", "batch/6.txt"]);
    expect(
      (await call(client, "list_objects", { bucket_name: bucket, prefix: "batch/" })).structuredContent!.objects,
    ).toEqual([]);
    const both = await call(client, "delete_objects", { bucket_name: bucket, keys: ["a"], prefix: "b" });
    expect(both.isError).toBe(true);
  });
});

describe("presign_url", () => {
  test("a GET link works without credentials; a PUT link uploads; an expired link is refused", async () => {
    await call(client, "put_object", { bucket_name: bucket, object_key: "shared/report.txt", content: "for a person" });
    const get = await call(client, "presign_url", {
      bucket_name: bucket,
      object_key: "shared/report.txt",
      expires_in: 600,
      response_content_disposition: "attachment; filename=r.txt",
    });
    expect(textOf(get)).toContain("Anyone holding this URL");
    const res = await fetch(get.structuredContent!.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe("attachment; filename=r.txt");
    expect(await res.text()).toBe("for a person");

    const put = await call(client, "presign_url", {
      bucket_name: bucket,
      object_key: "shared/upload.txt",
      method: "PUT",
      content_type: "text/plain",
    });
    const up = await fetch(put.structuredContent!.url, {
      method: "PUT",
      body: "from a browser",
      headers: put.structuredContent!.headers,
    });
    expect(up.status).toBe(200);
    expect(await body(bucket, "shared/upload.txt")).toBe("from a browser");

    const short = await call(client, "presign_url", {
      bucket_name: bucket,
      object_key: "shared/report.txt",
      expires_in: 1,
    });
    await Bun.sleep(2100);
    expect((await fetch(short.structuredContent!.url)).status).toBe(403);
  });
});

describe("presign_url says what the link exposes", () => {
  test("long-lived keys: the key id, never the secret, and a warning; temporary credentials: the session token too, no warning", async () => {
    const server = s3();
    const long = await call(client, "presign_url", { bucket_name: bucket, object_key: "shared/report.txt" });
    expect(long.structuredContent!.exposes).toEqual({
      access_key_id: server.accessKeyId,
      session_token: false,
      secret_key: false,
    });
    expect(long.structuredContent!.warning).toContain("long-lived access key");
    expect(textOf(long)).toContain("never the secret key");
    expect(textOf(long)).not.toContain(server.secretAccessKey);
    const temporary = await connectInMemory(
      {},
      {
        credentials: {
          accessKeyId: server.accessKeyId,
          secretAccessKey: server.secretAccessKey,
          sessionToken: "a-session-token-for-this-test",
        },
      },
    );
    try {
      const r = await call(temporary, "presign_url", { bucket_name: bucket, object_key: "shared/report.txt" });
      expect(r.structuredContent!.exposes).toEqual({
        access_key_id: server.accessKeyId,
        session_token: true,
        secret_key: false,
      });
      expect(r.structuredContent!.warning).toBeUndefined();
      expect(r.structuredContent!.url).toContain("X-Amz-Security-Token=a-session-token-for-this-test");
      expect(textOf(r)).toContain("session token");
    } finally {
      await temporary.close();
    }
  });
});

describe("get_object offset", () => {
  test("paging a multi-byte text by next_offset returns it exactly, each window on character boundaries", async () => {
    const text = "héllo wörld — ✓ ".repeat(200);
    await call(client, "put_object", { bucket_name: bucket, object_key: "paged.txt", content: text });
    let offset: number | null = 0;
    let joined = "";
    for (let i = 0; offset !== null && i < 200; i++) {
      const r = await call(client, "get_object", {
        bucket_name: bucket,
        object_key: "paged.txt",
        max_content_size: 97,
        offset,
      });
      expect(r.isError).toBeFalsy();
      joined += (r.content as { type: string; text: string }[])[0]!.text;
      offset = r.structuredContent!.next_offset;
    }
    expect(joined).toBe(text);
    // An offset inside a character starts at the next one.
    const mid = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "paged.txt",
      offset: 2,
      max_content_size: 10,
    });
    expect(mid.structuredContent!.offset).toBe(3);
    expect((mid.content as { text: string }[])[0]!.text.startsWith("llo")).toBe(true);
    const past = await call(client, "get_object", { bucket_name: bucket, object_key: "paged.txt", offset: 10 * MiB });
    expect(past.isError).toBe(true);
    expect(textOf(past)).toContain("InvalidRange");
  });
});
