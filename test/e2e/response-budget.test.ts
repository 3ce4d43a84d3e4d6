/**
 * Every response fits what a client can read (the SDK's stdio reader drops
 * the connection above 10 MiB a message), and parallel large reads stay
 * within a memory budget. Through the compiled binary against Ceph RGW.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { peakRss } from "../helpers/fake-s3.ts";
import { randomBytes } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
const CLIENT_LIMIT = 10 * MiB;
let bucket: string;
let session: Awaited<ReturnType<typeof connectBinary>>;

beforeAll(async () => {
  bucket = await freshBucket("budget");
  const s3 = sdkClient();
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: "eight.bin",
      Body: randomBytes(8_000_000, 9),
      ContentType: "application/octet-stream",
    }),
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: "controls.txt",
      Body: Buffer.alloc(2_000_000, 1),
      ContentType: "text/plain",
    }),
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: "four.bin",
      Body: randomBytes(4 * MiB, 8),
      ContentType: "application/octet-stream",
    }),
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: "ten.txt",
      Body: Buffer.alloc(10 * MiB, "a"),
      ContentType: "text/plain",
    }),
  );
  session = await connectBinary({ env: s3Env() });
}, 60_000);
afterAll(() => session.close());

const size = (r: unknown) => Buffer.byteLength(JSON.stringify(r));

test("an 8 MB binary read (11 MB as base64) is omitted with truncated and a hint; the session survives", async () => {
  const r = await call(session.client, "get_object", {
    bucket_name: bucket,
    object_key: "eight.bin",
    max_content_size: 10 * MiB,
    include_binary: true,
  });
  expect(r.isError).toBeFalsy();
  expect(size(r)).toBeLessThan(CLIENT_LIMIT);
  expect(r.structuredContent!.truncated).toBe(true);
  expect(r.structuredContent!.encoding).toBe("none");
  expect(textOf(r)).toContain('mode "download"');
  expect((await call(session.client, "list_buckets")).isError).toBeFalsy();
});

test("a 4 MiB binary read (5.6 MB as base64) fits the budget whole: only text is sent twice, so only text gets half", async () => {
  const r = await call(session.client, "get_object", {
    bucket_name: bucket,
    object_key: "four.bin",
    max_content_size: 10 * MiB,
    include_binary: true,
  });
  expect(r.structuredContent).toMatchObject({ truncated: false, encoding: "base64", returned_bytes: 4 * MiB });
  expect(r.content.some((c) => c.type === "resource")).toBe(true);
  expect(size(r)).toBeLessThan(CLIENT_LIMIT);
});

test("2 MB of control characters (12 MB of JSON escapes) is cut to fit, on a character boundary", async () => {
  const r = await call(session.client, "get_object", {
    bucket_name: bucket,
    object_key: "controls.txt",
    max_content_size: 10 * MiB,
  });
  expect(r.isError).toBeFalsy();
  expect(size(r)).toBeLessThan(CLIENT_LIMIT);
  expect(r.structuredContent!.truncated).toBe(true);
  const text = (r.content as { type: string; text: string }[])[0]!.text;
  expect(text.length).toBe(r.structuredContent!.returned_bytes);
  expect(text.length).toBeGreaterThan(100_000);
  expect((await call(session.client, "list_buckets")).isError).toBeFalsy();
});

// 20 reads: six times what the budget lets run at once, and without the budget (each holds ~4× its 10 MiB) far past
// 512 MB. The client waits longer than its default 60 s: the reads queue by design, and the machine may be busy.
test("20 parallel maximum-size reads: every one answered, peak memory under 512 MB", async () => {
  const reads = Array.from(
    { length: 20 },
    () =>
      session.client.callTool(
        { name: "get_object", arguments: { bucket_name: bucket, object_key: "ten.txt", max_content_size: 10 * MiB } },
        undefined,
        { timeout: 300_000 },
      ) as ReturnType<typeof call>,
  );
  const results = await Promise.all(reads);
  for (const r of results) {
    expect(r.isError).toBeFalsy();
    expect(size(r)).toBeLessThan(CLIENT_LIMIT);
    expect(r.structuredContent!.returned_bytes).toBeGreaterThan(MiB);
  }
  const peak = peakRss(session.pid);
  console.error(`peak RSS after 20 parallel reads: ${Math.round(peak / MiB)} MiB`);
  expect(peak).toBeLessThan(512 * MiB);
}, 300_000);
