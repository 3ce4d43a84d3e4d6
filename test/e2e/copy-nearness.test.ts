/**
 * A copy between stores judges its source near or far by how fast it answers
 * a HEAD (nearness.ts), not by how fast its first range came: a loaded
 * machine slows the range, and a near source must still be read a range at
 * a time. The judgement is a time of a few milliseconds, so this file runs
 * with nothing beside it (scripts/test.ts SOLO_GROUPS); ranged-download.test.ts
 * has the copy's other ranges.
 */

import { beforeAll, expect, test } from "bun:test";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { FIRST_RANGE_SIZE } from "../../src/storage/transfer/ranges.ts";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3, sdkClient, withSourceStore } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
const original = randomBytes(45 * MiB + 123, 11);
let bucket: string;
let dir: string;

beforeAll(async () => {
  bucket = await freshBucket("nearness");
  dir = tempDir("nearness");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: original }));
}, 60_000);

test("a copy whose source's first range comes slowly (a busy machine) but which answers a HEAD fast still reads one range at a time", async () => {
  // In front of the store: the first range's body trickles in (under the 100 MiB/s that means near), all else passes.
  let inFlight = 0;
  let most = 0;
  const upstream = s3().endpoint;
  const proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const ranged = req.method === "GET" && url.pathname.endsWith("/big.bin");
      if (ranged) most = Math.max(most, ++inFlight);
      const answer = await fetch(new URL(url.pathname + url.search, upstream), {
        method: req.method,
        headers: req.headers,
        redirect: "manual",
        decompress: false,
      } as RequestInit);
      if (!ranged) return answer;
      const bytes = new Uint8Array(await answer.arrayBuffer());
      const first = req.headers.get("range") === `bytes=0-${FIRST_RANGE_SIZE - 1}`;
      const body = new ReadableStream({
        async start(controller) {
          for (let at = 0; at < bytes.length; at += 64 * 1024) {
            controller.enqueue(bytes.subarray(at, at + 64 * 1024));
            if (first) await Bun.sleep(3);
          }
          controller.close();
          inFlight--;
        },
      });
      return new Response(body, { status: answer.status, headers: answer.headers });
    },
  });
  const target = await freshBucket("busy");
  const { client, close } = await connectBinary({
    env: withSourceStore(`http://127.0.0.1:${proxy.port}`),
    args: ["--allowed-dir", dir],
  });
  try {
    const r = await call(client, "copy_object", {
      source_store: "src",
      source_bucket: bucket,
      source_key: "big.bin",
      bucket_name: target,
      object_key: "copy.bin",
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    // Timed alone, the first range says far (two ranges at once to start); the store's fast HEAD says near.
    expect(most).toBe(1);
    const copied = await sdkClient().send(new GetObjectCommand({ Bucket: target, Key: "copy.bin" }));
    expect(sha256(await copied.Body!.transformToByteArray())).toBe(sha256(original));
  } finally {
    await close();
    proxy.stop(true);
  }
}, 60_000);
