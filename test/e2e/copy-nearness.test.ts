/**
 * A download judges its store near or far by how fast the first range
 * streams in, and checks that judgement against how fast the store answers a
 * HEAD (nearness.ts) where the range's timing can mislead: a loaded machine
 * slows a near store's range, and a process busy while a far store's range
 * arrives finds it piled up in its socket and reads it at once. A near store
 * is read in one stream (a range at a time for a copy); a far one in ranges
 * at once. The judgement is a time of a few milliseconds, so this file runs
 * with nothing beside it (scripts/test.ts SOLO_GROUPS); ranged-download.test.ts
 * has the copy's other ranges.
 */

import { beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { startWanProxy } from "../../scripts/bench/wan-proxy.ts";
import { FIRST_RANGE_SIZE } from "../../src/storage/transfer/ranges.ts";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient, withSourceStore } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
const original = randomBytes(45 * MiB + 123, 11);
let bucket: string;
let dir: string;

beforeAll(async () => {
  bucket = await freshBucket("nearness");
  dir = tempDir("nearness");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: original }));
}, 60_000);

/**
 * A proxy in front of the store that counts the GETs of big.bin in flight at once. `firstRange`: how the first
 * range's body comes (in 64 KiB pieces 3 ms apart, under the 100 MiB/s that means near; or all at once).
 * `answerAfterMs`: how long every answer is held back (a far store's round trip).
 */
function shapingProxy(firstRange: "trickling" | "at once", answerAfterMs = 0) {
  const seen = { most: 0 };
  let inFlight = 0;
  const upstream = s3().endpoint;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const ranged = req.method === "GET" && url.pathname.endsWith("/big.bin");
      if (ranged) seen.most = Math.max(seen.most, ++inFlight);
      const answer = await fetch(new URL(url.pathname + url.search, upstream), {
        method: req.method,
        headers: req.headers,
        redirect: "manual",
        decompress: false,
      } as RequestInit);
      const bytes = new Uint8Array(await answer.arrayBuffer());
      await Bun.sleep(answerAfterMs);
      const trickle =
        ranged && firstRange === "trickling" && req.headers.get("range") === `bytes=0-${FIRST_RANGE_SIZE - 1}`;
      const body = new ReadableStream({
        async start(controller) {
          if (!trickle && bytes.length > 0) controller.enqueue(bytes);
          for (let at = 0; trickle && at < bytes.length; at += 64 * 1024) {
            controller.enqueue(bytes.subarray(at, at + 64 * 1024));
            await Bun.sleep(3);
          }
          controller.close();
          if (ranged) inFlight--;
        },
      });
      return new Response(req.method === "HEAD" ? null : body, { status: answer.status, headers: answer.headers });
    },
  });
  return { endpoint: `http://127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) };
}

/** Copies big.bin from store "src" into a fresh bucket with the server's `env`; checks the copy's bytes. */
async function copyBig(label: string, env: Record<string, string>) {
  const target = await freshBucket(label);
  const { client, close } = await connectBinary({ env, args: ["--allowed-dir", dir] });
  try {
    const r = await call(client, "copy_object", {
      source_store: "src",
      source_bucket: bucket,
      source_key: "big.bin",
      bucket_name: target,
      object_key: "copy.bin",
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    const copied = await sdkClient().send(new GetObjectCommand({ Bucket: target, Key: "copy.bin" }));
    expect(sha256(await copied.Body!.transformToByteArray())).toBe(sha256(original));
    return r;
  } finally {
    await close();
  }
}

test("a copy whose source's first range comes slowly (a busy machine) but which answers a HEAD fast still reads one range at a time", async () => {
  const proxy = shapingProxy("trickling");
  try {
    await copyBig("busy", withSourceStore(proxy.endpoint));
    // Timed alone, the first range says far (two ranges at once to start); the store's fast HEAD says near.
    expect(proxy.seen.most).toBe(1);
  } finally {
    proxy.stop();
  }
}, 60_000);

test("a far store whose first range is read all at once (a process busy as it came) is still read in ranges at once, by a download and by a copy", async () => {
  // Every answer held back 40 ms: a HEAD says far, though the first range's bytes, once they come, come at once.
  const proxy = shapingProxy("at once", 40);
  const { client, close } = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint },
    args: ["--allowed-dir", dir],
  });
  try {
    const r = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "big.bin",
      mode: "download",
      local_path: "far.bin",
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(sha256(readFileSync(join(dir, "far.bin")))).toBe(sha256(original));
    // Timed alone, the first range says near (the rest in one GET); the slow HEAD says far.
    expect(proxy.seen.most).toBeGreaterThan(1);
  } finally {
    await close();
  }
  proxy.seen.most = 0;
  try {
    await copyBig("stalled", withSourceStore(proxy.endpoint));
    expect(proxy.seen.most).toBeGreaterThan(1);
  } finally {
    proxy.stop();
  }
}, 60_000);

test("a copy to a far destination streams its parts from the source's chunks (none read into a buffer first): no part carries a Content-MD5, and the object is the source's", async () => {
  // The destination behind the WAN model (a HEAD takes a 20 ms round trip: far); the source near.
  const wan = await startWanProxy(s3().endpoint);
  const proxy = startRecordingProxy(wan.endpoint);
  try {
    const r = await copyBig("far-target", { ...withSourceStore(s3().endpoint), STORE_ENDPOINT_URL: proxy.endpoint });
    expect(r.structuredContent).toMatchObject({ multipart: true, size: original.length });
    const parts = proxy.requests.filter((q) => q.method === "PUT" && q.search.includes("partNumber="));
    // A buffered part goes with the MD5 of its bytes; a streamed one cannot (its ETag is checked instead).
    expect(parts.length).toBe(Math.ceil(original.length / (5 * MiB)));
    expect(parts.filter((q) => q.contentMd5 !== null)).toEqual([]);
  } finally {
    proxy.stop();
    await wan.stop();
  }
}, 60_000);
