/**
 * Readiness beside liveness, through the compiled binary in remote mode:
 * /readyz is 200 while the store answers (and Redis, where configured) and
 * 503 naming only the check that failed when one does not, back to 200 once
 * it answers again; from SIGTERM on it is 503 while the server still
 * accepts for STORE_SHUTDOWN_UNREADY_MS, then the server stops accepting.
 * /healthz stays "the process serves". Neither names an address or a secret.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { rpc, startHttpBinary } from "../helpers/http.ts";
import { startRedis } from "../helpers/redis.ts";
import { s3, s3Env } from "../helpers/s3.ts";

const TOKEN = "readiness-token-0123456789abcdef";
let proxy: FaultProxy;

beforeAll(async () => {
  proxy = await startFaultProxy(s3().endpoint);
});
afterAll(() => proxy?.stop());

const readyz = async (url: string) => {
  const res = await fetch(url.replace(/\/mcp$/, "/readyz"));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** Polls /readyz until it has `status` (the store's answer is kept a few seconds). */
async function until(url: string, status: number) {
  let got = await readyz(url);
  for (let i = 0; i < 80 && got.status !== status; i++) {
    await Bun.sleep(125);
    got = await readyz(url);
  }
  return got;
}

test("ready while the store answers; 503 naming only the store when it does not; ready again when it does", async () => {
  const server = await startHttpBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint, STORE_HTTP_TOKENS: `ci:${TOKEN}` },
  });
  try {
    expect(await readyz(server.url)).toEqual({ status: 200, body: { ready: true, store: "answering" } });
    proxy.set({ kind: "refuse" });
    const down = await until(server.url, 503);
    expect(down).toEqual({ status: 503, body: { ready: false, store: "unreachable" } });
    // Liveness is about the process, which serves.
    expect((await fetch(server.url.replace(/\/mcp$/, "/healthz"))).status).toBe(200);
    proxy.set({ kind: "pass" });
    expect((await until(server.url, 200)).body).toEqual({ ready: true, store: "answering" });
    expect(JSON.stringify(down.body)).not.toContain("127.0.0.1");
  } finally {
    proxy.set({ kind: "pass" });
    await server.stop();
  }
}, 60_000);

test("with a state store, not ready while Redis is down, ready again once it is back", async () => {
  const redis = await startRedis();
  const server = await startHttpBinary({
    env: { ...s3Env(), STORE_HTTP_TOKENS: `ci:${TOKEN}`, STORE_STATE_URL: redis.url },
  });
  try {
    expect((await until(server.url, 200)).body).toEqual({ ready: true, store: "answering", state_store: "connected" });
    await redis.stop();
    expect(await until(server.url, 503)).toEqual({
      status: 503,
      body: { ready: false, store: "answering", state_store: "unreachable" },
    });
    await redis.start();
    expect((await until(server.url, 200)).body.state_store).toBe("connected");
    expect(server.stderr()).not.toContain(redis.password);
  } finally {
    await server.stop();
    await redis.stop().catch(() => {});
  }
}, 60_000);

test("on SIGTERM it turns not ready at once, still serving for STORE_SHUTDOWN_UNREADY_MS, then stops accepting", async () => {
  const server = await startHttpBinary({
    env: { ...s3Env(), STORE_HTTP_TOKENS: `ci:${TOKEN}`, STORE_SHUTDOWN_UNREADY_MS: "1500" },
  });
  expect((await readyz(server.url)).status).toBe(200);
  server.proc.kill("SIGTERM");
  await Bun.sleep(200);
  expect(await readyz(server.url)).toEqual({ status: 503, body: { ready: false, stopping: true } });
  // Still served while a load balancer takes the replica out.
  const ping = await rpc(server.url, { jsonrpc: "2.0", id: 1, method: "ping" }, { authorization: `Bearer ${TOKEN}` });
  expect(ping.status).toBe(200);
  expect(await server.proc.exited).toBe(0);
  await expect(fetch(server.url.replace(/\/mcp$/, "/readyz"))).rejects.toThrow();
}, 30_000);
