/**
 * Large downloads: one stream after the first range from a near store,
 * parallel ranges from a far one (the WAN model), each written at its offset:
 * the ranges cover the object exactly, the file is byte-identical (and its
 * sha256 is the file's), and an object replaced mid-download fails the call
 * instead of mixing versions.
 */
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";
import { FIRST_RANGE_SIZE, PARALLEL_RANGES, RANGE_SIZE } from "../../src/storage/ranged.ts";
import { startWanProxy } from "../../scripts/bench/wan-proxy.ts";

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

/** Downloads big.bin through `endpoint`; returns the byte ranges the server asked for, in order. */
async function rangesOfDownload(endpoint: string, localPath: string): Promise<[number, number][]> {
  const proxy = startRecordingProxy(endpoint);
  const { client, close } = await connectBinary({ env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint }, args: ["--allowed-dir", dir] });
  try {
    const r = await call(client, "get_object", { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: localPath });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(sha256(readFileSync(join(dir, localPath)))).toBe(sha256(original));
    expect((r.structuredContent as { sha256?: string }).sha256).toBe(sha256(original));
    return proxy.requests
      .filter((q) => q.method === "GET" && q.path.endsWith("/big.bin"))
      .map((q) => q.range!.match(/^bytes=(\d+)-(\d+)$/)!.slice(1).map(Number) as [number, number])
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

test("from a far store (the WAN model): the first range, then ranges of RANGE_SIZE, covering the object exactly once", async () => {
  const wan = await startWanProxy(s3().endpoint);
  try {
    const ranges = await rangesOfDownload(wan.endpoint, "far.bin");
    expect(ranges[0]).toEqual([0, FIRST_RANGE_SIZE - 1]);
    expect(ranges.length).toBe(1 + Math.ceil((SIZE - FIRST_RANGE_SIZE) / RANGE_SIZE));
    expectExactCover(ranges);
  } finally {
    await wan.stop();
  }
}, 60_000);

const REPLACED = 96 * MiB;
let replacedBucket: string;

test("an object replaced mid-download: ObjectChanged, nothing written", async () => {
  // Ranges are still to be requested once the first PARALLEL_RANGES are under way.
  expect(REPLACED).toBeGreaterThan(FIRST_RANGE_SIZE + PARALLEL_RANGES * RANGE_SIZE);
  replacedBucket = await freshBucket("replaced");
  await sdkClient().send(new PutObjectCommand({ Bucket: replacedBucket, Key: "moving.bin", Body: randomBytes(REPLACED, 12) }));
  // Throttled, so ranges past the first few are requested after the replacement.
  const proxy = await startFaultProxy(s3().endpoint);
  proxy.set({ kind: "throttle", bytesPerSecond: 16 * MiB });
  const { client, close } = await connectBinary({ env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint }, args: ["--allowed-dir", dir] });
  try {
    const pending = call(client, "get_object", { bucket_name: replacedBucket, object_key: "moving.bin", mode: "download", local_path: "moving/moving.bin" });
    await Bun.sleep(300);
    await sdkClient().send(new PutObjectCommand({ Bucket: replacedBucket, Key: "moving.bin", Body: randomBytes(REPLACED, 13) }));
    const r = await pending;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("ObjectChanged");
    expect(textOf(r)).toContain(`s3://${replacedBucket}/moving.bin`);
    expect(readdirSync(join(dir, "moving"))).toEqual([]);
  } finally {
    await close();
    await proxy.stop();
  }
}, 60_000);

