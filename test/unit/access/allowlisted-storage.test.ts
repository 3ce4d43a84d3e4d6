/**
 * Every Storage method is guarded: the method list the decorators share
 * (src/access/storage-touches.ts) names each method a real store has, and
 * the allowlist decorator (allowlisted-storage.ts) refuses each one that
 * touches a bucket outside the list, or a key with "." / ".." segments,
 * before the store sees anything. A method added to Storage without a guard
 * fails here (and does not compile without an entry in the list).
 */
import { expect, test } from "bun:test";
import { allowlistedStorage } from "../../../src/access/allowlisted-storage.ts";
import { guardedStorage } from "../../../src/access/guarded-storage.ts";
import { STORAGE_TOUCHES } from "../../../src/access/storage-touches.ts";
import type { Config } from "../../../src/config/config.ts";
import { ActionableError } from "../../../src/runtime/errors.ts";
import { createS3Storage, type Storage } from "../../../src/storage/index.ts";
import { addressesOf } from "../../../src/tool-kit/addresses.ts";
import { EVERY_CARD } from "../../../src/tool-registry/cards.ts";
import { EVERY_TOOL } from "../../../src/tool-registry/index.ts";

const OUT = "not-on-the-list";
const CONFIG_WITHOUT_STORE = {
  credentials: { accessKeyId: "a", secretAccessKey: "b" },
  region: "us-east-1",
  endpointUrl: "http://127.0.0.1:9",
  forcePathStyle: true,
  checksums: "WHEN_REQUIRED",
  connectTimeoutMs: 1000,
  requestTimeoutMs: 1000,
  operationTimeoutMs: 1000,
  maxAttempts: 1,
  multipartCopyThreshold: 5 * 1024 ** 3,
  stores: [],
} as unknown as Config;
const addr = (bucket: string, key = "k") => ({ bucket, key });
const upload = (bucket: string, key = "k") => ({
  bucket,
  key,
  size: 1,
  readAt: async () => 0,
  contentType: "text/plain",
});

/** Arguments for each method that touch `bucket` (and `key`): typed, so a new method needs its line here too. */
function samples(bucket: string, key = "k"): { [M in keyof Storage]: Parameters<Storage[M]> } {
  return {
    listBuckets: [{ maxBuckets: 10 } as never],
    headBucket: [bucket],
    createBucket: [bucket],
    deleteBucket: [bucket],
    listObjects: [{ bucket, prefix: key, maxKeys: 10 }],
    readObjectHead: [addr(bucket, key), 10],
    openObjectDownload: [addr(bucket, key)],
    uploadObject: [upload(bucket, key) as never],
    streamingFor: [upload(bucket, key) as never, undefined],
    copyFrom: [{} as Storage, { source: addr("source"), bucket, key, metadataDirective: "COPY" }],
    hasKeptUpload: [upload(bucket, key) as never],
    listIncompleteUploads: [bucket, key, 10, 10],
    headObject: [addr(bucket, key)],
    putObject: [{ bucket, key, body: new Uint8Array(1), contentType: "text/plain" } as never],
    copyObject: [{ source: addr(bucket, key), bucket, key, metadataDirective: "COPY" }],
    deleteObject: [addr(bucket, key)],
    deleteObjects: [bucket, [key]],
    listKeys: [bucket, key, 10],
    listObjectVersions: [{ bucket, prefix: key, maxKeys: 10 }],
    presign: [{ ...addr(bucket, key), method: "GET", expiresIn: 60 }],
    readBucketSetting: [bucket, "versioning" as never],
    setBucketVersioning: [bucket, "Enabled"],
    setBucketLifecycle: [bucket, { keep: [], set: [] }],
    setBucketCors: [bucket, []],
    setBucketPolicy: [bucket, null],
    getObjectTags: [addr(bucket, key)],
    putObjectTags: [addr(bucket, key), {}],
    getObjectLock: [addr(bucket, key)],
    setObjectRetention: [addr(bucket, key), null, false],
    setObjectLegalHold: [addr(bucket, key), "ON"],
    setDefaultRetention: [bucket, null],
    restoreObject: [addr(bucket, key), { days: 1, tier: "Bulk" }],
  };
}

/** A store that records each method called (and answers nothing useful). */
function recording(): { storage: Storage; called: string[] } {
  const called: string[] = [];
  const storage = new Proxy({} as Storage, {
    get:
      (_t, name) =>
      (..._args: unknown[]) => (
        called.push(String(name)),
        name === "hasKeptUpload"
          ? false
          : Promise.resolve(name === "listBuckets" ? { buckets: [{ name: OUT }, { name: "ok" }] } : undefined)
      ),
  });
  return { storage, called };
}

const allow = {
  bucketAllowed: (b: string) => b === "ok" || b === "source",
  checkBucket: (b: string) => {
    if (b !== "ok" && b !== "source")
      throw new ActionableError({ resource: b, code: "BucketNotAllowed", message: "no", hint: "no" });
  },
  checkKey: (k: string) => {
    if (k.split("/").some((s) => s === "." || s === ".."))
      throw new ActionableError({ resource: k, code: "UnsafeKey", message: "no", hint: "no" });
  },
};

test("the method list names every method a real store has, and each decorator has them all", () => {
  // Made, never used: no request is sent, so no store needs to run.
  const real = createS3Storage({ ...CONFIG_WITHOUT_STORE });
  const methods = Object.keys(real)
    .filter((k) => typeof (real as unknown as Record<string, unknown>)[k] === "function")
    .sort();
  expect(Object.keys(STORAGE_TOUCHES).sort()).toEqual(methods);
  const grants = {
    allows: () => true,
    bucketVisible: () => true,
    view: () => ({ all: true }),
    refusal: () => new Error("no"),
  } as never;
  for (const decorated of [allowlistedStorage(real, allow), guardedStorage(real, grants, "default")]) {
    expect(Object.keys(decorated).sort()).toEqual(methods);
  }
});

test("the allowlist decorator refuses every method on a bucket outside the list, and every key with a dot segment, before the store sees it", async () => {
  for (const [label, args] of [
    ["bucket", samples(OUT)],
    ["key", samples("ok", "a/../b")],
  ] as const) {
    const { storage, called } = recording();
    const fenced = allowlistedStorage(storage, allow);
    for (const [name, params] of Object.entries(args) as [keyof Storage, unknown[]][]) {
      const touches = (STORAGE_TOUCHES[name] as (...a: unknown[]) => { key?: string }[])(...params);
      // Filtered (listBuckets) or touching nothing of a store (hasKeptUpload); in the key round, only methods with a key.
      if (touches.length === 0 || (label === "key" && !touches.some((t) => t.key))) continue;
      const run = () => (fenced[name] as (...a: unknown[]) => unknown)(...params);
      await expect(Promise.resolve().then(run), `${name} (${label})`).rejects.toMatchObject({
        code: label === "bucket" ? "BucketNotAllowed" : "UnsafeKey",
      });
    }
    expect(called).toEqual([]);
  }
  // Allowed: passed through.
  const { storage, called } = recording();
  const fenced = allowlistedStorage(storage, allow);
  await fenced.headObject(addr("ok"));
  expect(called).toEqual(["headObject"]);
  // Bucket listings show only the allowed ones.
  expect((await fenced.listBuckets({ maxBuckets: 10 } as never)).buckets.map((b) => b.name)).toEqual(["ok"]);
});

test("each tool's card carries the bucket and key arguments its schema names (what the call wrapper checks)", () => {
  for (const tool of EVERY_TOOL) {
    const found = addressesOf(tool.inputSchema);
    const named = found.bucket.length + found.key.length + found.sourceBucket.length + found.sourceKey.length > 0;
    expect(EVERY_CARD.find((c) => c.name === tool.name)?.addresses, tool.name).toEqual(named ? found : undefined);
  }
  // Every tool that takes bucket_name names it through the fragment (else the wrapper would not see it).
  for (const tool of EVERY_TOOL)
    if ("bucket_name" in tool.inputSchema.shape)
      expect(addressesOf(tool.inputSchema).bucket, tool.name).toContain("bucket_name");
});
