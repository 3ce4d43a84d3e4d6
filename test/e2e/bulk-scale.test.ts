/**
 * 10,000 objects through the compiled binary against Ceph RGW: upload a
 * directory, sum and search the prefix, download it, and sync again with
 * nothing changed; the server's peak RSS stays under 150 MB throughout
 * (the listing and the walk stream; only names and sizes are kept).
 */
import { expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { tempDir } from "../helpers/files.ts";
import { connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3Env } from "../helpers/s3.ts";

const DIRS = 100;
const PER_DIR = 100;
const COUNT = DIRS * PER_DIR;
const MB = 1_000_000;
let currentPid = 0;

/** A call with room for a slow shared machine (the SDK's default gives up after 60 s). */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const started = performance.now();
  const r = (await client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 })) as CallToolResult & {
    structuredContent?: Record<string, any>;
  };
  console.log(
    `bulk scale: ${name} ${((performance.now() - started) / 1000).toFixed(1)} s, peak so far ${(peakRss(currentPid) / MB).toFixed(0)} MB`,
  );
  return r;
}

/** The process's peak resident set (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmHWM:"))!;
  return Number(line.replace(/\D/g, "")) * 1024;
}

test(`${COUNT.toLocaleString("en-US")} objects up, summed, found, down and synced again under 150 MB`, async () => {
  const dir = tempDir("bulk-scale");
  for (let d = 0; d < DIRS; d++) {
    mkdirSync(join(dir, "src", `d${d}`), { recursive: true });
    for (let f = 0; f < PER_DIR; f++) writeFileSync(join(dir, "src", `d${d}`, `f${f}.txt`), `object ${d}/${f}\n`);
  }
  const bucket = await freshBucket("bscale");
  // The call budget off: each call answers whole however loaded the machine is (the budget has tests of its own).
  const { client, close, pid } = await connectBinary({
    env: { ...s3Env(), STORE_CALL_BUDGET_SECONDS: "0" },
    args: ["--allowed-dir", dir],
  });
  currentPid = pid;
  try {
    const up = await call(client, "upload_directory", {
      local_dir: "src",
      bucket_name: bucket,
      prefix: "many",
      max_objects: COUNT,
    });
    expect(up.structuredContent, textOf(up)).toMatchObject({ complete: true, counts: { done: COUNT, failed: 0 } });
    expect(JSON.stringify(up).length).toBeLessThan(64 * 1024); // samples, not 10,000 names

    const usage = await call(client, "storage_usage", { bucket_name: bucket, prefix: "many/", top: 3 });
    expect(usage.structuredContent).toMatchObject({ objects: COUNT, group_count: DIRS, truncated: false });
    expect(usage.structuredContent!.groups).toHaveLength(100);

    const found = await call(client, "find_objects", {
      bucket_name: bucket,
      prefix: "many/",
      glob: "many/d1*/f99.txt",
    });
    expect(found.structuredContent).toMatchObject({ keys_scanned: COUNT });
    expect(found.structuredContent!.matches.map((m: { key: string }) => m.key).sort()).toEqual(
      ["many/d1/f99.txt", ...Array.from({ length: 10 }, (_, i) => `many/d1${i}/f99.txt`)].sort(),
    );

    const down = await call(client, "download_prefix", {
      bucket_name: bucket,
      prefix: "many",
      local_dir: "dst",
      max_objects: COUNT,
    });
    expect(down.structuredContent, textOf(down)).toMatchObject({
      complete: true,
      counts: { done: COUNT, failed: 0, unsafe: 0 },
    });
    expect(readdirSync(join(dir, "dst"))).toHaveLength(DIRS);
    expect(readFileSync(join(dir, "dst", "d73", "f45.txt"), "utf8")).toBe("object 73/45\n");

    const again = await call(client, "upload_directory", {
      local_dir: "src",
      bucket_name: bucket,
      prefix: "many",
      max_objects: COUNT,
    });
    expect(again.structuredContent).toMatchObject({ complete: true, counts: { done: 0, unchanged: COUNT } });
    const peak = peakRss(pid);
    console.log(
      `bulk scale: ${COUNT} objects, server peak RSS ${(peak / MB).toFixed(0)} MB; up ${up.structuredContent!.seconds} s, down ${down.structuredContent!.seconds} s, no-op ${again.structuredContent!.seconds} s`,
    );
    expect(peak).toBeLessThan(150 * MB);
  } finally {
    await close();
  }
}, 300_000);
