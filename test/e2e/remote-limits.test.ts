/**
 * Per-caller limits in remote mode, through the compiled binary: a caller
 * over its request rate, or over its requests in flight, is answered 429
 * with Retry-After before any work is done, while another caller is served.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes } from "../helpers/files.ts";
import { type HttpBinary, rpc, startHttpBinary } from "../helpers/http.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const ALICE = "alice-limits-token-0123456789";
const BOB = "bob-limits-token-0123456789ab";
const MiB = 1024 * 1024;
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const toolCall = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

let bucket: string;
let store: FaultProxy;
beforeAll(async () => {
  bucket = await freshBucket("limits");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "small.txt", Body: "small" }));
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "slow.bin", Body: randomBytes(3 * MiB, 5) }));
  store = await startFaultProxy(s3().endpoint);
  store.set({ kind: "throttle", bytesPerSecond: 2 * MiB });
});
afterAll(() => store.stop());

test("over its rate a caller gets 429 with Retry-After; another caller is served meanwhile", async () => {
  const server: HttpBinary = await startHttpBinary({
    env: {
      ...s3Env(),
      STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}`,
      STORE_CALLER_RATE: "2",
      STORE_CALLER_BURST: "3",
    },
  });
  try {
    const head = toolCall(1, "head_object", { bucket_name: bucket, object_key: "small.txt" });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    let message = "";
    for (let i = 0; i < 6; i++) {
      const res = await rpc(server.url, head, auth(ALICE));
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get("retry-after");
        message = JSON.stringify(await res.json());
      }
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses.slice(3)).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(message).toContain("2 requests per second");
    expect((await rpc(server.url, head, auth(BOB))).status).toBe(200);
    expect(server.stderr()).toContain('"rate limited" 429');
    // The bucket refills: after Retry-After, alice is served again.
    await Bun.sleep(Number(retryAfter) * 1000);
    expect((await rpc(server.url, head, auth(ALICE))).status).toBe(200);
  } finally {
    await server.stop();
  }
}, 30_000);

test("over its requests in flight a caller gets 429 until its slow call is answered; another caller is served", async () => {
  const server = await startHttpBinary({
    env: {
      ...s3Env(),
      STORE_ENDPOINT_URL: store.endpoint,
      STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}`,
      STORE_CALLER_IN_FLIGHT: "1",
    },
  });
  try {
    const slow = rpc(
      server.url,
      toolCall(1, "get_object", { bucket_name: bucket, object_key: "slow.bin", max_content_size: 3 * MiB }),
      auth(ALICE),
    );
    await Bun.sleep(300);
    const head = toolCall(2, "head_object", { bucket_name: bucket, object_key: "small.txt" });
    const refused = await rpc(server.url, head, auth(ALICE));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(JSON.stringify(await refused.json())).toContain("1 requests in flight");
    expect((await rpc(server.url, head, auth(BOB))).status).toBe(200);
    expect((await slow).status).toBe(200);
    expect((await rpc(server.url, head, auth(ALICE))).status).toBe(200);
  } finally {
    await server.stop();
  }
}, 30_000);
