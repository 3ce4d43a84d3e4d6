/**
 * Large downloads: one stream after the first range from a near store,
 * parallel ranges from a far one (the WAN model; after the first, quick
 * requests pinned to its ETag, without the SDK), each written at its offset:
 * the ranges cover the object exactly, the file is byte-identical (and its
 * sha256 is the file's), and an object replaced mid-download fails the call
 * instead of mixing versions. A copy to another store takes even a near
 * source a range at a time.
 */

import { beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { startWanProxy } from "../../scripts/bench/wan-proxy.ts";
import { HASH_THREAD_MIN_BYTES } from "../../src/local/pieces.ts";
import { createS3Storage } from "../../src/storage/index.ts";
import { FIRST_RANGE_SIZE, RANGE_SIZE } from "../../src/storage/transfer/ranges.ts";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { call, connectBinary, testConfig, textOf } from "../helpers/mcp.ts";
import { type Recorded, startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient, withSourceStore } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
const SIZE = 45 * MiB + 123; // not a multiple of the range size
let bucket: string;
let dir: string;
const original = randomBytes(SIZE, 11);

beforeAll(async () => {
  bucket = await freshBucket("ranged");
  dir = tempDir("ranged");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: original }));
}, 60_000);

/** Downloads big.bin through `endpoint`; returns the byte ranges the server asked for, in order (`gets`: its GETs as sent). */
async function rangesOfDownload(
  endpoint: string,
  localPath: string,
  gets: Recorded[] = [],
): Promise<[number, number][]> {
  const proxy = startRecordingProxy(endpoint);
  const { client, close } = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint },
    args: ["--allowed-dir", dir],
  });
  try {
    const r = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "big.bin",
      mode: "download",
      local_path: localPath,
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(sha256(readFileSync(join(dir, localPath)))).toBe(sha256(original));
    expect((r.structuredContent as { sha256?: string }).sha256).toBe(sha256(original));
    gets.push(...proxy.requests.filter((q) => q.method === "GET" && q.path.endsWith("/big.bin")));
    return gets
      .map(
        (q) =>
          q
            .range!.match(/^bytes=(\d+)-(\d+)$/)!
            .slice(1)
            .map(Number) as [number, number],
      )
      .sort((a, b) => a[0] - b[0]);
  } finally {
    await close();
    proxy.stop();
  }
}

function expectExactCover(ranges: [number, number][]): void {
  let covered = 0;
  for (const [start, end] of ranges) {
    expect(start).toBe(covered);
    covered = Math.min(end, SIZE - 1) + 1;
  }
  expect(covered).toBe(SIZE);
}

test("from a near store: the ranges requested cover the object exactly once, and the file is byte-identical", async () => {
  const ranges = await rangesOfDownload(s3().endpoint, "near.bin");
  // One stream after the first range, or ranges when the machine was slow to answer: either way, exactly once.
  expect(ranges[0]).toEqual([0, FIRST_RANGE_SIZE - 1]);
  expectExactCover(ranges);
}, 60_000);

test("from a far store (the WAN model): the first range, then ranges of RANGE_SIZE, covering the object exactly once; those pinned to the first's ETag without the SDK", async () => {
  const wan = await startWanProxy(s3().endpoint);
  try {
    const gets: Recorded[] = [];
    const ranges = await rangesOfDownload(wan.endpoint, "far.bin", gets);
    expect(ranges[0]).toEqual([0, FIRST_RANGE_SIZE - 1]);
    expect(ranges.length).toBe(1 + Math.ceil((SIZE - FIRST_RANGE_SIZE) / RANGE_SIZE));
    expectExactCover(ranges);
    // The first answer, through the SDK, says what the object is; the ranges after it are quick requests pinned to it.
    const [first, ...rest] = gets;
    expect(first!.fromSdk).toBe(true);
    const { ETag } = await sdkClient().send(new HeadObjectCommand({ Bucket: bucket, Key: "big.bin" }));
    for (const q of rest)
      expect({ fromSdk: q.fromSdk, ifMatch: q.ifMatch }).toEqual({ fromSdk: false, ifMatch: ETag! });
  } finally {
    await wan.stop();
  }
}, 60_000);

test("a copy to another store reads even a near source a range at a time (its bytes wait in the store, not in the server)", async () => {
  const proxy = startRecordingProxy(s3().endpoint);
  const target = await freshBucket("paced");
  const { client, close } = await connectBinary({
    env: withSourceStore(proxy.endpoint),
    args: ["--allowed-dir", dir],
  });
  try {
    const r = await call(client, "copy_object", {
      source_store: "src",
      source_bucket: bucket,
      source_key: "big.bin",
      bucket_name: target,
      object_key: "copy.bin",
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    const ranges = proxy.requests
      .filter((q) => q.method === "GET" && q.path.endsWith("/big.bin"))
      .map(
        (q) =>
          q
            .range!.match(/^bytes=(\d+)-(\d+)$/)!
            .slice(1)
            .map(Number) as [number, number],
      )
      .sort((a, b) => a[0] - b[0]);
    expect(ranges[0]).toEqual([0, FIRST_RANGE_SIZE - 1]);
    // Not one stream for the rest: no range longer than RANGE_SIZE.
    for (const [start, end] of ranges) expect(end - start + 1).toBeLessThanOrEqual(RANGE_SIZE);
    expectExactCover(ranges);
    const copied = await sdkClient().send(new GetObjectCommand({ Bucket: target, Key: "copy.bin" }));
    expect(sha256(await copied.Body!.transformToByteArray())).toBe(sha256(original));
  } finally {
    await close();
    proxy.stop();
  }
}, 60_000);

const REPLACED = 24 * MiB;

test("an object replaced mid-download (far store): ObjectChanged, nothing written", async () => {
  const replacedBucket = await freshBucket("replaced");
  await sdkClient().send(
    new PutObjectCommand({ Bucket: replacedBucket, Key: "moving.bin", Body: randomBytes(REPLACED, 12) }),
  );
  const replacement = randomBytes(REPLACED, 13);
  // Every GET after the first waits until the object has been replaced: the ranges are asked for after it, always.
  let replaced!: () => void;
  const stored = new Promise<void>((resolve) => (replaced = resolve));
  const gets = () => proxy.requests.filter((q) => q.method === "GET" && q.path.endsWith("/moving.bin"));
  const wan = await startWanProxy(s3().endpoint);
  const proxy = startRecordingProxy(wan.endpoint, (q) =>
    q.method === "GET" && q.path.endsWith("/moving.bin") && gets().length > 1 ? stored : undefined,
  );
  const { client, close } = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint },
    args: ["--allowed-dir", dir],
  });
  try {
    const pending = call(client, "get_object", {
      bucket_name: replacedBucket,
      object_key: "moving.bin",
      mode: "download",
      local_path: "moving/moving.bin",
    });
    while (gets().length < 2) await Bun.sleep(10);
    await sdkClient().send(new PutObjectCommand({ Bucket: replacedBucket, Key: "moving.bin", Body: replacement }));
    replaced();
    const r = await pending;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("ObjectChanged");
    expect(textOf(r)).toContain(`s3://${replacedBucket}/moving.bin`);
    expect(gets().length).toBeGreaterThan(2); // parallel ranges, not one stream
    // A quick range refused (412) is asked again of the SDK, whose answer is the one reported.
    expect(gets().some((q, i) => i > 0 && !q.fromSdk)).toBe(true);
    expect(gets().some((q, i) => i > 0 && q.fromSdk)).toBe(true);
    expect(readdirSync(join(dir, "moving"))).toEqual([]);
  } finally {
    await close();
    proxy.stop();
    await wan.stop();
  }
}, 60_000);

test("objects past HASH_THREAD_MIN_BYTES (hashed on the binary's second thread), single-part and multipart, near and far: byte-identical, the sha256 the file's", async () => {
  const size = HASH_THREAD_MIN_BYTES + 5 * MiB + 7;
  const data = randomBytes(size, 14);
  const large = await freshBucket("large");
  // Single-part: its ETag is an MD5, checked over the same bytes; multipart (upload_file): no MD5 to check.
  await sdkClient().send(new PutObjectCommand({ Bucket: large, Key: "single.bin", Body: data }));
  writeFileSync(join(dir, "large-source.bin"), data);
  const wan = await startWanProxy(s3().endpoint);
  const near = await connectBinary({ env: s3Env(), args: ["--allowed-dir", dir] });
  const far = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: wan.endpoint },
    args: ["--allowed-dir", dir],
  });
  try {
    const up = await call(near.client, "upload_file", {
      local_file_path: join(dir, "large-source.bin"),
      bucket_name: large,
      object_key: "multi.bin",
    });
    expect(up.structuredContent!.etag).toMatch(/-\d+"$/);
    for (const [name, session] of [
      ["near", near],
      ["far", far],
    ] as const) {
      for (const key of ["single.bin", "multi.bin"]) {
        const localPath = `large/${name}-${key}`;
        const r = await call(session.client, "get_object", {
          bucket_name: large,
          object_key: key,
          mode: "download",
          local_path: localPath,
        });
        expect(r.isError, textOf(r)).toBeFalsy();
        expect(r.structuredContent).toMatchObject({ bytes: size, sha256: sha256(data) });
        expect(sha256(readFileSync(join(dir, localPath)))).toBe(sha256(data));
      }
    }
  } finally {
    await near.close();
    await far.close();
    await wan.stop();
  }
}, 120_000);

test("every chunk handed to the sink is freed once its write resolves (near and far), and the bytes are the object's", async () => {
  const wan = await startWanProxy(s3().endpoint);
  try {
    for (const endpointUrl of [s3().endpoint, wan.endpoint]) {
      const storage = createS3Storage(testConfig({ endpointUrl }));
      const download = await storage.openObjectDownload({ bucket, key: "big.bin" });
      const file = new Uint8Array(SIZE);
      const handed: Uint8Array[] = [];
      let freedEarly = 0;
      try {
        await download.deliver(async (offset, chunks) => {
          let at = offset;
          for (const chunk of chunks) {
            file.set(chunk, at);
            at += chunk.length;
            handed.push(chunk);
          }
          // Still readable while the write is under way.
          if (chunks.some((chunk) => chunk.byteLength === 0)) freedEarly++;
          await Bun.sleep(0);
        });
      } finally {
        download.discard();
      }
      expect(sha256(file)).toBe(sha256(original));
      expect(freedEarly).toBe(0);
      // Fetch's chunks each own their buffer: every one of them detached, its memory released.
      expect(handed.length).toBeGreaterThan(0);
      expect(handed.filter((chunk) => chunk.byteLength !== 0).length).toBe(0);
    }
  } finally {
    await wan.stop();
  }
}, 60_000);
