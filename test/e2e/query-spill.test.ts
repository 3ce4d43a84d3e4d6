/**
 * What a query may spill to its directory (hardening, fifth round), through
 * the compiled binary: the bound holds (STORE_QUERY_SPILL_MB; the engine
 * took it only when set after its temp directory, so no bound held before),
 * and where the temp directory is a tmpfs, spill is memory: the default
 * there is small, and an operator's own bound decides alone.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

// Sorting 20 million 16-byte rows under the engine's 96 MB: ~190 MB spilled.
const SPILLING_SQL =
  "SELECT count(*) AS n FROM (SELECT hash(i) AS x, i FROM objects, range(20000000) t(i) ORDER BY x OFFSET 1)";
let bucket: string;
let memoryDir: string;

beforeAll(async () => {
  bucket = await freshBucket("spill");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "one.csv", Body: "a\n1\n" }));
  memoryDir = join(tempDir("spill-tmpfs"), "memory");
  mkdirSync(memoryDir);
  const out = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1g", "tmpfs", memoryDir]);
  if (out.status !== 0) throw new Error(`cannot mount a tmpfs for the spill test (run as root): ${out.stderr}`);
}, 60_000);
afterAll(() => {
  if (memoryDir) spawnSync("umount", ["-l", memoryDir]);
});

async function spill(env: Record<string, string>) {
  const { client, close } = await connectBinary({ env: { ...s3Env(), ...env } });
  try {
    return await call(client, "query_objects", { bucket_name: bucket, keys: ["one.csv"], sql: SPILLING_SQL });
  } finally {
    await close();
  }
}

test("a query that spills past STORE_QUERY_SPILL_MB ends QueryTooLarge, naming the bound; nothing is left", async () => {
  const tmp = tempDir("spill-disk");
  const r = await spill({ TMPDIR: tmp, STORE_QUERY_SPILL_MB: "32" });
  expect(r.isError, textOf(r)).toBe(true);
  expect(textOf(r)).toContain("QueryTooLarge");
  expect(textOf(r)).toContain("max_temp_directory_size");
  expect(readdirSync(tmp).filter((n) => n.startsWith("store-mcp-query-"))).toEqual([]);
}, 90_000);

test("on a tmpfs temp directory the default bound is small (spill is memory there); the operator's bound decides alone", async () => {
  const onMemory = await spill({ TMPDIR: memoryDir });
  expect(onMemory.isError, textOf(onMemory)).toBe(true);
  expect(textOf(onMemory)).toContain("QueryTooLarge");
  const given = await spill({ TMPDIR: memoryDir, STORE_QUERY_SPILL_MB: "512" });
  expect(given.isError, textOf(given)).toBeFalsy();
  expect(given.structuredContent!.rows).toEqual([[19999999]]);
  expect(readdirSync(memoryDir).filter((n) => n.startsWith("store-mcp-query-"))).toEqual([]);
}, 120_000);
