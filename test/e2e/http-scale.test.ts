/**
 * Remote mode scales out: two replicas behind a real reverse proxy (nginx,
 * round robin). One client's calls alternate between them and all succeed
 * (nothing is kept between requests), and a replica that gets SIGTERM
 * mid-call finishes that call while the proxy sends new ones to the other.
 * Also: mcp-remote bridging a stdio client to the HTTP server with a bearer
 * header, as desktop clients without remote support use it.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { connectHttp, type HttpBinary, startHttpBinary } from "../helpers/http.ts";
import { call, textOf } from "../helpers/mcp.ts";
import { type Nginx, startNginx } from "../helpers/nginx.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const TOKEN = "team-token-0123456789abcdef0123";
const MiB = 1024 * 1024;
let bucket: string;
let store: FaultProxy;
let replicas: HttpBinary[];
let proxy: Nginx;

beforeAll(async () => {
  bucket = await freshBucket("scale");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "small.txt", Body: "shared by every replica" }));
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "slow.bin", Body: randomBytes(6 * MiB, 3) }));
  // The store behind a throttle, so one call can be caught in flight.
  store = await startFaultProxy(s3().endpoint);
  store.set({ kind: "throttle", bytesPerSecond: 4 * MiB });
  const env = { ...s3Env(), STORE_ENDPOINT_URL: store.endpoint, STORE_HTTP_TOKENS: `team:${TOKEN}` };
  replicas = await Promise.all([startHttpBinary({ env }), startHttpBinary({ env })]);
  proxy = await startNginx(replicas.map((r) => r.port));
}, 60_000);
afterAll(async () => {
  await proxy.stop();
  for (const r of replicas) r.proc.kill("SIGKILL");
  await store.stop();
});

const toolCalls = (r: HttpBinary) => (r.stderr().match(/"tools\/call /g) ?? []).length;

test("one client's calls alternate between the replicas and all succeed", async () => {
  const client = await connectHttp(proxy.url, TOKEN);
  try {
    const before = replicas.map(toolCalls);
    for (let i = 0; i < 10; i++) {
      const r = await call(client, i % 2 ? "head_object" : "list_objects", {
        bucket_name: bucket,
        ...(i % 2 ? { object_key: "small.txt" } : {}),
      });
      expect(r.isError, textOf(r)).toBeFalsy();
    }
    await Bun.sleep(50);
    const served = replicas.map((r, i) => toolCalls(r) - before[i]!);
    expect(served[0]! + served[1]!).toBe(10);
    expect(served[0]).toBe(5);
    expect(served[1]).toBe(5);
  } finally {
    await client.close();
  }
});

test("under load (100 clients x 10 calls), SIGTERM to one replica fails no call: the proxy retries what the stopping replica never accepted", async () => {
  // Fresh replicas on the store directly (the shared ones stand behind a throttle, and one is stopped below).
  const env = {
    ...s3Env(),
    STORE_HTTP_TOKENS: `team:${TOKEN}`,
    STORE_CALLER_RATE: "off",
    STORE_CALLER_IN_FLIGHT: "off",
  };
  const pair = await Promise.all([startHttpBinary({ env }), startHttpBinary({ env })]);
  const front = await startNginx(pair.map((r) => r.port));
  try {
    const clients = await Promise.all(Array.from({ length: 100 }, () => connectHttp(front.url, TOKEN)));
    let done = 0;
    const failures: string[] = [];
    await Promise.all(
      clients.map(async (client) => {
        for (let i = 0; i < 10; i++) {
          const r = await call(client, i % 2 ? "head_object" : "list_objects", {
            bucket_name: bucket,
            ...(i % 2 ? { object_key: "small.txt" } : {}),
          }).catch((err: unknown) => ({ isError: true, content: [{ type: "text" as const, text: String(err) }] }));
          if (r.isError) failures.push(textOf(r as never).slice(0, 200));
          if (++done === 300) pair[0]!.proc.kill("SIGTERM");
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(await pair[0]!.proc.exited).toBe(0);
    await Promise.all(clients.map((c) => c.close()));
  } finally {
    await front.stop();
    for (const r of pair) r.proc.kill("SIGKILL");
  }
}, 60_000);

test("SIGTERM to the replica serving a call: that call completes, calls not yet started go to the other, none fails", async () => {
  const client = await connectHttp(proxy.url, TOKEN);
  try {
    // Learn which replica served the last call: round robin sends the next one to the other.
    const before = replicas.map(toolCalls);
    await call(client, "list_objects", { bucket_name: bucket });
    await Bun.sleep(50);
    const last = replicas.findIndex((r, i) => toolCalls(r) > before[i]!);
    const doomed = replicas[1 - last]!;
    const survivor = replicas[last]!;
    const slow = call(client, "get_object", { bucket_name: bucket, object_key: "slow.bin", max_content_size: 6 * MiB });
    await Bun.sleep(300);
    doomed.proc.kill("SIGTERM");
    await Bun.sleep(100);
    const survivorBefore = toolCalls(survivor);
    const later = await Promise.all(
      Array.from({ length: 6 }, () => call(client, "head_object", { bucket_name: bucket, object_key: "small.txt" })),
    );
    for (const r of later) expect(r.isError, textOf(r)).toBeFalsy();
    const inFlight = await slow;
    expect(inFlight.isError, textOf(inFlight)).toBeFalsy();
    expect(inFlight.structuredContent?.size).toBe(6 * MiB);
    expect(await doomed.proc.exited).toBe(0);
    await Bun.sleep(50);
    expect(toolCalls(survivor) - survivorBefore).toBe(6);
  } finally {
    await client.close();
  }
}, 60_000);

test("mcp-remote bridges a stdio client to the HTTP server with a bearer header", async () => {
  const direct = await startHttpBinary({ env: { ...s3Env(), STORE_HTTP_TOKENS: `team:${TOKEN}` } });
  const home = tempDir("mcp-remote-home");
  const transport = new StdioClientTransport({
    command: "node",
    args: [
      join(import.meta.dir, "../../node_modules/mcp-remote/dist/proxy.js"),
      direct.url,
      "--transport",
      "http-only",
      "--header",
      `Authorization:Bearer ${TOKEN}`,
    ],
    env: { PATH: process.env.PATH ?? "", HOME: home, MCP_REMOTE_CONFIG_DIR: join(home, ".mcp-auth") },
    stderr: "pipe",
  });
  const client = new Client({ name: "stdio-desktop-client", version: "1" });
  try {
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("list_objects");
    const r = await call(client, "get_object", { bucket_name: bucket, object_key: "small.txt" });
    expect(textOf(r)).toContain("shared by every replica");
  } finally {
    await client.close();
    await direct.stop();
  }
}, 60_000);
