/**
 * Per-caller limits shared by every replica through a real Redis
 * (--state-url), two replicas behind nginx: a caller over its limit gets 429
 * at the single limit, not twice it; with the store stopped, calls keep being
 * served (each replica counts alone, one warning a minute) and the shared
 * limit is back once the store is; the store's password is in no log line.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { RedisClient } from "bun";
import { startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes } from "../helpers/files.ts";
import { type HttpBinary, rpc, startHttpBinary } from "../helpers/http.ts";
import { type Nginx, startNginx } from "../helpers/nginx.ts";
import { type Redis, startRedis } from "../helpers/redis.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const TOKEN = "shared-limits-token-0123456789abcdef";
let redis: Redis;
let replicas: HttpBinary[];
let proxy: Nginx;

beforeAll(async () => {
  redis = await startRedis();
  // 4 a second, a burst of 4, nothing else limited: a quick run of calls meets the bucket, not the clock.
  const env = {
    ...s3Env(),
    STORE_HTTP_TOKENS: `team:${TOKEN}`,
    STORE_STATE_URL: redis.url,
    STORE_CALLER_RATE: "4",
    STORE_CALLER_BURST: "4",
    STORE_CALLER_IN_FLIGHT: "0",
  };
  replicas = await Promise.all([startHttpBinary({ env }), startHttpBinary({ env })]);
  proxy = await startNginx(replicas.map((r) => r.port));
}, 60_000);
afterAll(async () => {
  await proxy?.stop();
  for (const r of replicas ?? []) r.proc.kill("SIGKILL");
  await redis?.stop();
});

const ping = (id: number) =>
  rpc(proxy.url, { jsonrpc: "2.0", id, method: "ping" }, { authorization: `Bearer ${TOKEN}` });

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
  expect(await (await fetch(`http://127.0.0.1:${replicas[0]!.port}/healthz`)).json()).toEqual({
    status: "ok",
    state_store: "connected",
  });
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

test("requests in flight are counted across replicas too: a slow call on one makes the other refuse the caller's next, until it is answered", async () => {
  const bucket = await freshBucket("sharedflight");
  await sdkClient().send(
    new PutObjectCommand({ Bucket: bucket, Key: "slow.bin", Body: randomBytes(3 * 1024 * 1024, 7) }),
  );
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "small.txt", Body: "small" }));
  // The store behind a throttle, so the slow call is surely in flight while the other replica is asked.
  const store = await startFaultProxy(s3().endpoint);
  store.set({ kind: "throttle", bytesPerSecond: 1024 * 1024 });
  const env = {
    ...s3Env(),
    STORE_ENDPOINT_URL: store.endpoint,
    STORE_HTTP_TOKENS: `team:${TOKEN}`,
    STORE_STATE_URL: redis.url,
    STORE_CALLER_RATE: "0",
    STORE_CALLER_IN_FLIGHT: "1",
  };
  const [a, b] = await Promise.all([startHttpBinary({ env }), startHttpBinary({ env })]);
  const call = (id: number, name: string, args: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args },
  });
  const auth = { authorization: `Bearer ${TOKEN}` };
  try {
    // Both replicas ready as a load balancer would see them: connected to the state store (a request before that is
    // judged by the replica alone, by design).
    const connected = async (r: HttpBinary) =>
      ((await (await fetch(`http://127.0.0.1:${r.port}/healthz`)).json()) as { state_store: string }).state_store ===
      "connected";
    for (const r of [a!, b!])
      for (const until = Date.now() + 10_000; !(await connected(r)) && Date.now() < until; ) await Bun.sleep(50);
    const slow = rpc(
      a!.url,
      call(1, "get_object", { bucket_name: bucket, object_key: "slow.bin", max_content_size: 3 * 1024 * 1024 }),
      auth,
    );
    // The other replica is asked once the slow call holds its slot in the store (a fixed wait raced it under CI's load,
    // and a first ask sent at once can even take the slot before it). It then runs ~3 s.
    const counts = new RedisClient(redis.url);
    const held = async () => Number(await counts.send("ZCARD", ["smcp:inflight:label:team"]));
    for (const until = Date.now() + 30_000; (await held()) < 1 && Date.now() < until; ) await Bun.sleep(50);
    if ((await held()) !== 1) throw new Error(`no slot held in the store; replica a said:\n${a!.stderr()}`);
    counts.close();
    const head = call(2, "head_object", { bucket_name: bucket, object_key: "small.txt" });
    const refused = await rpc(b!.url, head, auth);
    expect(refused.status).toBe(429);
    expect(JSON.stringify(await refused.json())).toContain("1 requests in flight");
    expect((await slow).status).toBe(200);
    await Bun.sleep(200); // the slot is given back without waiting for the store
    expect((await rpc(b!.url, head, auth)).status).toBe(200);
  } finally {
    a!.proc.kill("SIGKILL");
    b!.proc.kill("SIGKILL");
    await store.stop();
  }
}, 60_000);
