/**
 * Per-caller limits shared by every replica through a real Redis
 * (--state-url), two replicas behind nginx: a caller over its limit gets 429
 * at the single limit, not twice it; with the store stopped, calls keep being
 * served (each replica counts alone, one warning a minute) and the shared
 * limit is back once the store is; the store's password is in no log line.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rpc, startHttpBinary, type HttpBinary } from "../helpers/http.ts";
import { startNginx, type Nginx } from "../helpers/nginx.ts";
import { startRedis, type Redis } from "../helpers/redis.ts";
import { s3Env } from "../helpers/s3.ts";

const TOKEN = "shared-limits-token-0123456789abcdef";
let redis: Redis;
let replicas: HttpBinary[];
let proxy: Nginx;

beforeAll(async () => {
  redis = await startRedis();
  // 4 a second, a burst of 4, nothing else limited: a quick run of calls meets the bucket, not the clock.
  const env = { ...s3Env(), STORE_HTTP_TOKENS: `team:${TOKEN}`, STORE_STATE_URL: redis.url, STORE_CALLER_RATE: "4", STORE_CALLER_BURST: "4", STORE_CALLER_IN_FLIGHT: "0" };
  replicas = await Promise.all([startHttpBinary({ env }), startHttpBinary({ env })]);
  proxy = await startNginx(replicas.map((r) => r.port));
}, 60_000);
afterAll(async () => {
  await proxy?.stop();
  for (const r of replicas ?? []) r.proc.kill("SIGKILL");
  await redis?.stop();
});

const ping = (id: number) => rpc(proxy.url, { jsonrpc: "2.0", id, method: "ping" }, { authorization: `Bearer ${TOKEN}` });

/** Twelve pings at once through the proxy (six to each replica): how many were served, and the 429s' Retry-After. */
async function burst(): Promise<{ served: number; limited: Response[] }> {
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => ping(i + 1)));
  return { served: answers.filter((r) => r.status === 200).length, limited: answers.filter((r) => r.status === 429) };
}

test("a caller over its limit through both replicas is refused at the single limit, not twice it", async () => {
  const { served, limited } = await burst();
  // The bucket holds 4 (and refills 4 a second: at most one more while the burst is answered); per replica it would be 8.
  expect(served).toBeGreaterThanOrEqual(4);
  expect(served).toBeLessThanOrEqual(5);
  expect(limited.length).toBe(12 - served);
  expect(Number(limited[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  // After a second and a half the bucket has refilled: served again.
  await Bun.sleep(1_500);
  expect((await ping(100)).status).toBe(200);
}, 30_000);

test("the state store stopped: calls are still served, each replica counting alone, with a warning (health stays OK and says so); back once it is", async () => {
  expect(await (await fetch(`http://127.0.0.1:${replicas[0]!.port}/healthz`)).json()).toEqual({ status: "ok", state_store: "connected" });
  await redis.stop();
  await Bun.sleep(200);
  const { served } = await burst();
  // Each replica's own bucket of 4: up to 8 of the 12, never a failed call.
  expect(served).toBeGreaterThanOrEqual(8);
  expect(replicas.some((r) => r.stderr().includes("state store (--state-url) not answering"))).toBe(true);
  const health = await fetch(`http://127.0.0.1:${replicas[0]!.port}/healthz`);
  expect(health.status).toBe(200);
  expect(await health.json()).toEqual({ status: "ok", state_store: "unreachable" });
  await redis.start();
  await Bun.sleep(2_500);
  const again = await burst();
  expect(again.served).toBeLessThanOrEqual(5);
}, 30_000);

test("the store's password appears in no log line", () => {
  for (const r of replicas) {
    expect(r.stderr()).not.toContain(redis.password);
    expect(r.stderr()).not.toContain(encodeURIComponent(redis.password));
  }
});
