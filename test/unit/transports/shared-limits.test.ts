/**
 * The shared limiter against a real redis-server, here behind a TCP relay that
 * can hold the store's answers back: a store that answers after the request
 * was judged locally must not keep the slot it granted.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { freePort } from "../../../scripts/s3/local-servers.ts";
import type { Logger } from "../../../src/runtime/log.ts";
import { SharedCallerLimits } from "../../../src/transports/shared-limits.ts";
import { type Redis, startRedis } from "../../helpers/redis.ts";

let redis: Redis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/** A relay to the store whose answers arrive `delay()` ms late. */
function slowRelay(target: URL, delay: () => number) {
  const port = freePort();
  type Pair = { upstream?: import("bun").Socket<unknown>; pending: Uint8Array[] };
  const server = Bun.listen<Pair>({
    hostname: "127.0.0.1",
    port,
    socket: {
      async open(client) {
        client.data = { pending: [] };
        client.data.upstream = await Bun.connect({
          hostname: target.hostname,
          port: Number(target.port),
          socket: {
            data(_, chunk) {
              const copy = new Uint8Array(chunk);
              setTimeout(() => client.write(copy), delay());
            },
            close() {
              client.end();
            },
          },
        });
        for (const chunk of client.data.pending) client.data.upstream.write(chunk);
      },
      data(client, chunk) {
        if (client.data.upstream) client.data.upstream.write(chunk);
        else client.data.pending.push(new Uint8Array(chunk));
      },
      close(client) {
        client.data.upstream?.end();
      },
    },
  });
  const url = new URL(redis.url);
  url.port = String(port);
  return { url: url.toString(), stop: () => server.stop(true) };
}

const quiet = { warn() {}, info() {}, debug() {}, error() {} } as unknown as Logger;

test("a store that answers after the request was judged here gives the slot it granted back", async () => {
  let late = 0;
  const relay = slowRelay(new URL(redis.url), () => late);
  const limits = new SharedCallerLimits({ perSecond: 0, burst: 0, inFlight: 1 }, relay.url, quiet);
  const counts = new RedisClient(redis.url);
  const held = async () => Number(await counts.send("ZCARD", ["smcp:inflight:late"]));
  try {
    for (const until = Date.now() + 5_000; limits.stateStore() !== "connected" && Date.now() < until; )
      await Bun.sleep(20);
    // Loaded once at the store's own pace, so the late answer below is the script's, not the upload of it.
    const first = await limits.admit("warm");
    expect(first.ok).toBe(true);
    if (first.ok) first.release();

    late = 600;
    const judgedHere = await limits.admit("late");
    expect(judgedHere.ok).toBe(true); // this replica's own count
    await Bun.sleep(1_200); // the store's answer has come, granting a slot no one will release
    expect(await held()).toBe(0);
    if (judgedHere.ok) judgedHere.release();
  } finally {
    counts.close();
    limits.close();
    relay.stop();
  }
}, 20_000);
