/**
 * Remote mode through the compiled binary: Streamable HTTP at /mcp with the
 * SDK's HTTP client, static bearer tokens, Host/Origin checks, bounded
 * bodies, JSON for plain calls and SSE for calls with progress, local files
 * off unless --allowed-dir, access logs without tokens, graceful SIGTERM.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { connectHttp, type HttpBinary, rpc, startHttpBinary } from "../helpers/http.ts";
import { call, requireBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";
import { waitFor } from "../helpers/wait.ts";

const TOKEN = "alice-token-0123456789abcdef";
const OTHER = "bob-token-fedcba9876543210xyz";
const MiB = 1024 * 1024;
let bucket: string;
let server: HttpBinary;

beforeAll(async () => {
  bucket = await freshBucket("http");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "hello.txt", Body: "hello over http" }));
  server = await startHttpBinary({ env: { ...s3Env(), STORE_HTTP_TOKENS: `alice:${TOKEN},bob:${OTHER}` } });
}, 60_000);
afterAll(async () => {
  await server.stop();
});

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

describe("static bearer tokens", () => {
  test("a valid token: the SDK's HTTP client lists tools and calls them against the store", async () => {
    const client = await connectHttp(server.url, TOKEN);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("list_objects");
      expect(names).toContain("presign_url");
      // No --allowed-dir: nothing may touch the server's disk.
      expect(names).not.toContain("upload_file");
      expect(names).not.toContain("upload_directory");
      expect(names).not.toContain("download_prefix");
      expect((await client.listTools()).tools.find((t) => t.name === "get_object")!.description).toContain(
        "presign_url",
      );
      const read = await call(client, "get_object", { bucket_name: bucket, object_key: "hello.txt" });
      expect(textOf(read)).toContain("hello over http");
      const download = await call(client, "get_object", {
        bucket_name: bucket,
        object_key: "hello.txt",
        mode: "download",
        local_path: "/tmp/x.txt",
      });
      expect(download.isError).toBe(true);
      expect(textOf(download)).toContain("LocalFilesDisabled");
      expect(existsSync("/tmp/x.txt")).toBe(false);
    } finally {
      await client.close();
    }
  });

  test("no token: 401 with a Bearer challenge; a wrong token: 401 invalid_token; neither reaches the tools", async () => {
    const none = await rpc(server.url, initialize);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer /);
    const wrong = await rpc(server.url, initialize, { authorization: "Bearer not-the-token-at-all-0000" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const basic = await rpc(server.url, initialize, { authorization: `Basic ${btoa(`x:${TOKEN}`)}` });
    expect(basic.status).toBe(401);
    await expect(connectHttp(server.url)).rejects.toThrow();
  });

  test("plain calls are answered with JSON; a call with a progress token streams SSE", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const plain = await rpc(
      server.url,
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "list_objects", arguments: { bucket_name: bucket } },
      },
      auth,
    );
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toContain("application/json");
    expect(JSON.stringify(await plain.json())).toContain("hello.txt");
    const streamed = await rpc(
      server.url,
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "list_objects", arguments: { bucket_name: bucket }, _meta: { progressToken: "p1" } },
      },
      auth,
    );
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    expect(await streamed.text()).toContain("hello.txt");
  });

  test("each request is logged once on stderr with the tool and the token's label, never the token", async () => {
    const client = await connectHttp(server.url, OTHER);
    await call(client, "list_buckets");
    await client.close();
    const line = /http POST \/mcp "tools\/call list_buckets" 200 \d+ms caller="label:bob"/;
    await waitFor("the call's access log line", () => line.test(server.stderr()));
    const log = server.stderr();
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain(OTHER);
  });
});

describe("safe by default", () => {
  test("a foreign Host or Origin is refused with 403 (DNS rebinding); localhost on any port and no Origin pass", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await rpc(server.url, initialize, { ...auth, host: "evil.example.com" })).status).toBe(403);
    expect((await rpc(server.url, initialize, { ...auth, origin: "http://evil.example.com" })).status).toBe(403);
    expect((await rpc(server.url, initialize, { ...auth, host: "localhost:1234" })).status).toBe(200);
    expect((await rpc(server.url, initialize, { ...auth, origin: `http://127.0.0.1:${server.port}` })).status).toBe(
      200,
    );
    // No CORS headers unless origins are configured.
    const preflight = await fetch(server.url, {
      method: "OPTIONS",
      headers: { origin: `http://127.0.0.1:${server.port}`, "access-control-request-method": "POST" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("an oversized body is refused (413), oversized headers (431), and the server keeps serving; GET /mcp is 405 (stateless); /healthz answers", async () => {
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "put_object", arguments: { pad: "x".repeat(9 * MiB) } },
    });
    const refused = await rpc(server.url, huge, { authorization: `Bearer ${TOKEN}` }).catch(() => undefined);
    // Bun may cut the upload before answering; either way nothing was processed.
    if (refused) expect(refused.status).toBe(413);
    expect((await rpc(server.url, initialize, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect(
      (await fetch(server.url, { headers: { authorization: `Bearer ${TOKEN}`, accept: "text/event-stream" } })).status,
    ).toBe(405);
    const health = await fetch(server.url.replace("/mcp", "/healthz"));
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    // Headers are bounded too (Bun's 16 KiB): 431 above it.
    expect(
      (await fetch(server.url.replace("/mcp", "/healthz"), { headers: { "x-padding": "x".repeat(20_000) } })).status,
    ).toBe(431);
  });

  test("a non-loopback listen address without authentication refuses to start, naming the settings", async () => {
    const proc = Bun.spawn([requireBinary(), "--transport", "http", "--listen", "0.0.0.0:18799"], {
      env: { PATH: process.env.PATH ?? "", ...s3Env() },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await proc.exited).toBe(1);
    const err = await new Response(proc.stderr).text();
    expect(err).toContain("STORE_HTTP_TOKENS");
    expect(err).toContain("--oauth-issuer");
    expect(await new Response(proc.stdout).text()).toBe("");
  });

  test("configured origins get CORS: a preflight is answered and responses carry Access-Control-Allow-Origin", async () => {
    const app = "https://app.example.com";
    const cors = await startHttpBinary({
      env: { ...s3Env(), STORE_HTTP_TOKENS: `alice:${TOKEN}` },
      args: ["--allowed-origin", app],
    });
    try {
      const preflight = await fetch(cors.url, {
        method: "OPTIONS",
        headers: {
          origin: app,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type",
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe(app);
      expect(preflight.headers.get("access-control-allow-headers")).toContain("Authorization");
      const res = await rpc(cors.url, initialize, { authorization: `Bearer ${TOKEN}`, origin: app });
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe(app);
    } finally {
      await cors.stop();
    }
  });
});

describe("local files and progress with --allowed-dir", () => {
  test("upload_file and download work inside the allowed dir, and progress arrives over SSE", async () => {
    const dir = tempDir("http-files");
    mkdirSync(join(dir, "out"));
    const data = randomBytes(12 * MiB, 5);
    await Bun.write(join(dir, "up.bin"), data);
    const withDir = await startHttpBinary({
      env: { ...s3Env(), STORE_HTTP_TOKENS: `alice:${TOKEN}` },
      args: ["--allowed-dir", dir],
    });
    const client = await connectHttp(withDir.url, TOKEN);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("upload_file");
      const progress: number[] = [];
      const up = await client.callTool(
        { name: "upload_file", arguments: { local_file_path: "up.bin", bucket_name: bucket, object_key: "up.bin" } },
        undefined,
        { onprogress: (p) => void progress.push(p.progress) },
      );
      expect(up.isError, JSON.stringify(up.content)).toBeFalsy();
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.at(-1)).toBe(12 * MiB);
      const down = await call(client, "get_object", {
        bucket_name: bucket,
        object_key: "up.bin",
        mode: "download",
        local_path: "out/up.bin",
      });
      expect(down.isError, textOf(down)).toBeFalsy();
      expect(sha256(readFileSync(join(dir, "out", "up.bin")))).toBe(sha256(data));
      // Roots never widen anything on a remote server: outside the allowed dir is refused.
      const outside = await call(client, "get_object", {
        bucket_name: bucket,
        object_key: "up.bin",
        mode: "download",
        local_path: "/tmp/escape.bin",
      });
      expect(outside.isError).toBe(true);
    } finally {
      await client.close();
      await withDir.stop();
    }
  }, 60_000);
});

// SIGINT drains like SIGTERM (SIGHUP reopens the audit log in remote mode: audit.test.ts).
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`${signal} mid-call: the call in flight completes, new connections are refused, exit 0`, async () => {
    const big = await freshBucket("http-drain");
    await sdkClient().send(new PutObjectCommand({ Bucket: big, Key: "slow.bin", Body: randomBytes(8 * MiB, 7) }));
    const proxy = await startFaultProxy(s3().endpoint);
    proxy.set({ kind: "throttle", bytesPerSecond: 4 * MiB });
    const draining = await startHttpBinary({
      env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint, STORE_HTTP_TOKENS: `alice:${TOKEN}` },
    });
    try {
      const client = await connectHttp(draining.url, TOKEN);
      const pending = call(client, "get_object", {
        bucket_name: big,
        object_key: "slow.bin",
        max_content_size: 6 * MiB,
      });
      // In flight once its GET reached the store; stopped once the server says so and no longer accepts.
      await waitFor("the call's GET at the store", () => proxy.stats.connections > 0);
      draining.proc.kill(signal);
      await waitFor("the shutdown", () => draining.stderr().includes(`shutting down (${signal})`));
      await waitFor("new connections refused", () =>
        fetch(draining.url.replace("/mcp", "/healthz")).then(
          () => false,
          () => true,
        ),
      );
      const r = await pending;
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(r.structuredContent?.size).toBe(8 * MiB);
      expect(await draining.proc.exited).toBe(0);
    } finally {
      draining.proc.kill("SIGKILL");
      await proxy.stop();
    }
  }, 60_000);
}

test("the official conformance suite's server scenarios that apply pass against HTTP mode", async () => {
  const open = await startHttpBinary({ env: s3Env() });
  try {
    for (const scenario of [
      "server-initialize",
      "ping",
      "tools-list",
      "resources-list",
      "prompts-list",
      "dns-rebinding-protection",
    ]) {
      const proc = Bun.spawn(
        [
          process.execPath,
          join(import.meta.dir, "../../node_modules/@modelcontextprotocol/conformance/dist/index.js"),
          "server",
          "--url",
          open.url,
          "--scenario",
          scenario,
        ],
        { stdout: "pipe", stderr: "pipe" },
      );
      const out = (await new Response(proc.stdout).text()).replace(/\x1b\[[0-9;]*m/g, "");
      await proc.exited;
      expect(out, `${scenario}: ${out.slice(-1500)}`).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    }
  } finally {
    await open.stop();
  }
}, 120_000);
