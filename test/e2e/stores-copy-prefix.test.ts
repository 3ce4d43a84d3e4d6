/**
 * Copies between stores through the compiled binary, by prefix and moves: the
 * source_store parameter, copy_prefix verified and resumed, a move's deletes on
 * the source store only, nothing left behind by a failed or cancelled copy, the
 * source store's allowlist and read-only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";

import { CreateBucketCommand, DeleteBucketCommand, HeadObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";

import { randomBytes } from "../helpers/files.ts";
import { keptRecords } from "../helpers/kept.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";

import { freshBucket, openUploadsAfterCleanUp, sdkClient, uniqueBucket } from "../helpers/s3.ts";
import {
  copySession,
  listed,
  multipartSource,
  otherClient,
  severalEnv,
  storeBuckets,
  stored,
} from "../helpers/several-stores.ts";

let ours: string;
let theirs: string;
beforeAll(async () => {
  ({ ours, theirs } = await storeBuckets());
});

describe("copies between stores", () => {
  let session: Awaited<ReturnType<typeof connectBinary>>;
  let state: string;
  beforeAll(async () => {
    ({ session, state } = await copySession(theirs));
  });
  afterAll(() => session.close());

  test("the tools list offers source_store on the copy tools only", async () => {
    const { tools } = await session.client.listTools();
    const withSource = tools
      .filter((t) => "source_store" in ((t.inputSchema.properties as Record<string, unknown>) ?? {}))
      .map((t) => t.name);
    expect(withSource).toEqual(["copy_object", "copy_prefix"]);
  });

  test("copy_prefix with source_store copies a prefix between stores, verified; again, nothing to do", async () => {
    const keys = ["pfx/a.txt", "pfx/sub/b.txt", "pfx/sub/deep/c.bin"];
    for (const [i, Key] of keys.entries())
      await otherClient().send(
        new PutObjectCommand({
          Bucket: theirs,
          Key,
          Body: `content ${i}`.repeat(i * 100 + 1),
          ...(i === 1 ? { ContentType: "text/x-note", CacheControl: "max-age=60", Metadata: { origin: "other" } } : {}),
        }),
      );
    const r = await call(session.client, "copy_prefix", {
      source_store: "other",
      source_bucket: theirs,
      source_prefix: "pfx",
      bucket_name: ours,
      prefix: "imported",
    });
    expect(r.structuredContent, textOf(r)).toMatchObject({
      complete: true,
      counts: { done: 3, failed: 0 },
      source: `other:s3://${theirs}/pfx/`,
    });
    for (const [i, key] of keys.entries())
      expect(new TextDecoder().decode(await stored(ours, key.replace("pfx/", "imported/")))).toBe(
        `content ${i}`.repeat(i * 100 + 1),
      );
    // Listed objects are copied without a HEAD: type, cache control and metadata still come along (from the GET).
    const head = await sdkClient().send(new HeadObjectCommand({ Bucket: ours, Key: "imported/sub/b.txt" }));
    expect([head.ContentType, head.CacheControl, head.Metadata?.origin]).toEqual([
      "text/x-note",
      "max-age=60",
      "other",
    ]);
    const again = await call(session.client, "copy_prefix", {
      source_store: "other",
      source_bucket: theirs,
      source_prefix: "pfx",
      bucket_name: ours,
      prefix: "imported",
    });
    expect(again.structuredContent).toMatchObject({ counts: { done: 0, unchanged: 3 } });
    // Store other is read-only here (so it deletes nothing either): a move would delete there.
    const readOnly = await call(session.client, "copy_prefix", {
      source_store: "other",
      source_bucket: theirs,
      source_prefix: "pfx",
      bucket_name: ours,
      prefix: "moved",
      move: true,
      confirm: true,
    });
    expect(textOf(readOnly)).toContain("DeleteNotAllowed");
    expect(textOf(readOnly)).toContain("(store other)");
  });

  test("a move between stores needs deletes on the source store only: refused where it lacks them, done (sources deleted once copied) where it has them", async () => {
    const moving = uniqueBucket("moving");
    await otherClient().send(new CreateBucketCommand({ Bucket: moving }));
    const keys = ["m/one.txt", "m/two/three.txt"];
    for (const [i, Key] of keys.entries())
      await otherClient().send(new PutObjectCommand({ Bucket: moving, Key, Body: `moved ${i}` }));
    const args = {
      source_store: "other",
      source_bucket: moving,
      source_prefix: "m",
      bucket_name: ours,
      prefix: "arrived",
      move: true,
      confirm: true,
    };
    // Deletes allowed on the default store (the destination) but not on other (the source).
    const refusing = await connectBinary({
      env: severalEnv({ STORE_OTHER_ALLOW_DELETE: "false" }),
      args: ["--allow-delete"],
    });
    try {
      const refused = await call(refusing.client, "copy_prefix", args);
      expect(textOf(refused)).toContain("DeleteNotAllowed");
      expect(textOf(refused)).toContain("(store other)");
    } finally {
      await refusing.close();
    }
    expect(await listed(moving)).toEqual(keys);
    // The other way round: the destination may not delete, the source may.
    const moveOnly = await connectBinary({ env: severalEnv({ STORE_OTHER_ALLOW_DELETE: "true" }) });
    try {
      const moved = await call(moveOnly.client, "copy_prefix", args);
      expect(moved.structuredContent, textOf(moved)).toMatchObject({
        complete: true,
        counts: { done: 2, failed: 0, deleted: 2 },
      });
      for (const [i, key] of keys.entries())
        expect(new TextDecoder().decode(await stored(ours, key.replace("m/", "arrived/")))).toBe(`moved ${i}`);
      expect(await listed(moving)).toEqual([]);
      // Deletes stay off on the default store itself.
      const own = await call(moveOnly.client, "copy_prefix", {
        source_bucket: ours,
        source_prefix: "arrived",
        bucket_name: ours,
        prefix: "elsewhere",
        move: true,
        confirm: true,
      });
      expect(textOf(own)).toContain("DeleteNotAllowed");
    } finally {
      await moveOnly.close();
      // Emptied by the move: gone, so the other user's store lists what the later tests expect.
      await otherClient().send(new DeleteBucketCommand({ Bucket: moving }));
    }
  });

  /**
   * Open uploads the server did not keep on purpose: a cancel that lands after the upload began keeps it, recorded, for
   * the same call to resume (the product's rule); which way a cancel lands depends on timing (CI's load saw both).
   */
  const unkeptUploads = async (bucket: string) => {
    const open = (await openUploadsAfterCleanUp(bucket)) as { UploadId?: string }[];
    const kept = keptRecords(state)
      .uploads.filter((u) => u.bucket === bucket)
      .map((u) => u.upload_id);
    return open.filter((u) => !kept.includes(u.UploadId!));
  };

  test("a copy that fails at the destination leaves no multipart upload; a cancelled one none it did not keep, and nothing at the key", async () => {
    const nowhere = uniqueBucket("nowhere");
    const failed = await call(session.client, "copy_object", {
      source_store: "other",
      source_bucket: theirs,
      source_key: "big.bin",
      bucket_name: nowhere,
      object_key: "x.bin",
    });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toContain(`default:s3://${nowhere}/x.bin: NoSuchBucket`);
    // A missing source names its store.
    const missing = await call(session.client, "copy_object", {
      source_store: "other",
      source_bucket: theirs,
      source_key: "missing.bin",
      bucket_name: ours,
      object_key: "x.bin",
    });
    expect(textOf(missing)).toMatch(new RegExp(`^other:s3://${theirs}/missing\\.bin: (NotFound|NoSuchKey)`));
    const target = await freshBucket("cut");
    const cancel = new AbortController();
    const running = session.client.callTool(
      {
        name: "copy_object",
        arguments: {
          source_store: "other",
          source_bucket: theirs,
          source_key: "big.bin",
          bucket_name: target,
          object_key: "cut.bin",
        },
      },
      undefined,
      { signal: cancel.signal, onprogress: () => cancel.abort(), resetTimeoutOnProgress: true },
    );
    await running.then(
      () => undefined,
      () => undefined,
    );
    expect(await unkeptUploads(target)).toEqual([]);
    await expect(sdkClient().send(new HeadObjectCommand({ Bucket: target, Key: "cut.bin" }))).rejects.toThrow();
    // A multipart source (streamed parts) cancelled as it starts: the upload is aborted too.
    await multipartSource(theirs, "cancelled-parts.bin", randomBytes(5 * 1024 * 1024, 48), 4);
    const stopParts = new AbortController();
    const parts = session.client.callTool(
      {
        name: "copy_object",
        arguments: {
          source_store: "other",
          source_bucket: theirs,
          source_key: "cancelled-parts.bin",
          bucket_name: target,
          object_key: "parts.bin",
        },
      },
      undefined,
      { signal: stopParts.signal, onprogress: () => stopParts.abort(), resetTimeoutOnProgress: true },
    );
    await parts.then(
      () => undefined,
      () => undefined,
    );
    expect(await unkeptUploads(target)).toEqual([]);
    await expect(sdkClient().send(new HeadObjectCommand({ Bucket: target, Key: "parts.bin" }))).rejects.toThrow();
  }, 60_000);

  test("the source store's allowlist applies to the source, and a read-only source store may still be read", async () => {
    const limited = await connectBinary({
      env: severalEnv({ STORE_OTHER_BUCKETS: "someone-else", STORE_OTHER_READ_ONLY: "true" }),
    });
    try {
      const refused = await call(limited.client, "copy_object", {
        source_store: "other",
        source_bucket: theirs,
        source_key: "note.txt",
        bucket_name: ours,
        object_key: "nope.txt",
      });
      expect(textOf(refused)).toContain("BucketNotAllowed");
    } finally {
      await limited.close();
    }
    const readOnly = await connectBinary({ env: severalEnv({ STORE_OTHER_READ_ONLY: "true" }) });
    try {
      const copied = await call(readOnly.client, "copy_object", {
        source_store: "other",
        source_bucket: theirs,
        source_key: "note.txt",
        bucket_name: ours,
        object_key: "ro.txt",
      });
      expect(copied.isError, textOf(copied)).toBeFalsy();
    } finally {
      await readOnly.close();
    }
  });
});
