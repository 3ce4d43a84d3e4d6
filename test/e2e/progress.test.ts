/**
 * Progress notifications through the compiled binary, as the SDK client's
 * onprogress sees them: for uploads, downloads and copies, at most every
 * 250 ms, never after the answer or after a cancel; they keep a client's
 * request timeout from firing during a long transfer.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { connectBinary, requireBinary } from "../helpers/mcp.ts";
import { INITIALIZE, INITIALIZED } from "../helpers/raw-stdio.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
const SIZE = 24 * MiB;
let proxy: FaultProxy;
let bucket: string;
let dir: string;
let session: Awaited<ReturnType<typeof connectBinary>>;

beforeAll(async () => {
  proxy = await startFaultProxy(s3().endpoint);
  bucket = await freshBucket("progress");
  dir = tempDir("progress");
  writeFileSync(join(dir, "up.bin"), randomBytes(SIZE, 21));
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "down.bin", Body: randomBytes(SIZE, 22) }));
  session = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint },
    args: ["--allowed-dir", dir],
  });
}, 60_000);
afterAll(async () => {
  await session.close();
  await proxy.stop();
});

/** Calls a tool with a progress handler; returns the result, the updates and those that came after the answer. */
async function withProgress(
  name: string,
  args: Record<string, unknown>,
  options: { timeout?: number; resetTimeoutOnProgress?: boolean } = {},
) {
  const updates: (Progress & { at: number })[] = [];
  const result = await session.client.callTool({ name, arguments: args }, undefined, {
    onprogress: (p) => updates.push({ ...p, at: performance.now() }),
    ...options,
  });
  const answeredAt = performance.now();
  const seenAtAnswer = updates.length;
  await Bun.sleep(600);
  return { result, updates, late: updates.length - seenAtAnswer, answeredAt };
}

function checkUpdates(updates: (Progress & { at: number })[]): void {
  expect(updates.length).toBeGreaterThanOrEqual(3);
  for (let i = 1; i < updates.length; i++) {
    expect(updates[i]!.progress).toBeGreaterThan(updates[i - 1]!.progress);
    // At least every 2 s while bytes move.
    expect(updates[i]!.at - updates[i - 1]!.at).toBeLessThan(2_000);
  }
  // At most every 250 ms (the final one excepted), counted over the whole transfer: sent 250 ms apart, two may arrive
  // closer when a loaded machine delays the first of them.
  const moving = updates.filter((u) => u.progress < SIZE);
  const span = moving.at(-1)!.at - moving[0]!.at;
  expect(moving.length - 1).toBeLessThanOrEqual(Math.floor(span / 250) + 1);
  for (const u of updates) {
    expect(u.total).toBe(SIZE);
    expect(u.message).toContain("bytes");
  }
  expect(updates.at(-1)!.progress).toBeLessThanOrEqual(SIZE);
}

test("upload_file reports bytes stored, then answers; nothing after the answer", async () => {
  // 8 MiB/s a connection, 3 parts in flight: ~1 s, a part (5 MiB) stored every ~0.6 s.
  proxy.set({ kind: "throttle", bytesPerSecond: 8 * MiB });
  const { result, updates, late } = await withProgress("upload_file", {
    local_file_path: "up.bin",
    bucket_name: bucket,
    object_key: "up.bin",
  });
  expect(result.isError).toBeFalsy();
  checkUpdates(updates);
  expect(late).toBe(0);
}, 60_000);

test("get_object download reports bytes written; a 1.5 s client timeout is reset by progress", async () => {
  // 2 MiB/s a connection, 4 ranges beside the first: ~2.5 s, longer than the client's timeout.
  proxy.set({ kind: "throttle", bytesPerSecond: 2 * MiB });
  const { result, updates, late } = await withProgress(
    "get_object",
    { bucket_name: bucket, object_key: "down.bin", mode: "download", local_path: "down.bin" },
    { timeout: 1_500, resetTimeoutOnProgress: true },
  );
  expect(result.isError).toBeFalsy();
  checkUpdates(updates);
  expect(updates.at(-1)!.progress).toBe(SIZE);
  expect(late).toBe(0);
}, 60_000);

test("a cancelled download sends no progress after the cancel (raw protocol, as the server sends it)", async () => {
  proxy.set({ kind: "throttle", bytesPerSecond: 2 * MiB });
  // The SDK client drops progress for a request it cancelled, so this reads the server's stdout itself.
  const proc = Bun.spawn([requireBinary(), "--allowed-dir", dir], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    env: {
      PATH: process.env.PATH ?? "/usr/bin",
      HOME: process.env.HOME ?? "/root",
      ...s3Env(),
      STORE_ENDPOINT_URL: proxy.endpoint,
    },
  });
  const send = (m: object) => proc.stdin.write(`${JSON.stringify(m)}\n`);
  const progressAt: number[] = [];
  let cancelledAt = Infinity;
  const reader = (async () => {
    let buffer = "";
    for await (const chunk of proc.stdout) {
      buffer += new TextDecoder().decode(chunk);
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const msg = JSON.parse(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        if (msg.method === "notifications/progress" && msg.params.progressToken === "dl") {
          progressAt.push(performance.now());
          if (progressAt.length === 2) {
            send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "test" } });
            cancelledAt = performance.now();
          }
        }
      }
    }
  })();
  send(INITIALIZE);
  send(INITIALIZED);
  send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: {
      name: "get_object",
      arguments: { bucket_name: bucket, object_key: "down.bin", mode: "download", local_path: "cancelled.bin" },
      _meta: { progressToken: "dl" },
    },
  });
  await Bun.sleep(4_000);
  proc.stdin.end();
  await proc.exited;
  await reader;
  expect(cancelledAt).toBeLessThan(Infinity);
  // What was already on its way when the cancel was sent may still arrive; nothing later.
  expect(progressAt.filter((t) => t > cancelledAt + 200)).toEqual([]);
}, 60_000);
