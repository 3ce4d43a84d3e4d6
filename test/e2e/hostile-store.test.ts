/**
 * A hostile or broken store (test/helpers/fake-s3.ts) through the compiled
 * binary: answers are bounded, bodies are verified against what the store
 * promised, and the server keeps serving with its memory in bounds.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type FakeS3, fakeEnv, listBucketsXml, listObjectsXml, peakRss, startFakeS3, xml } from "../helpers/fake-s3.ts";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";

let fake: FakeS3;
let dir: string;
let session: Awaited<ReturnType<typeof connectBinary>>;

beforeAll(async () => {
  fake = await startFakeS3();
  dir = tempDir("hostile");
  mkdirSync(join(dir, "in"));
  await Bun.write(join(dir, "in", "up.txt"), "upload me");
  session = await connectBinary({
    // Room for a 32 MiB answer's first 8 MiB however loaded the machine; the trickle test has a server of its own.
    env: fakeEnv(fake, { STORE_OPERATION_TIMEOUT_MS: "30000" }),
    args: ["--allowed-dir", dir],
  });
});
afterAll(async () => {
  await session.close();
  await fake.stop();
});

const md5 = (s: string | Uint8Array) => createHash("md5").update(s).digest("hex");
const MiB = 1024 * 1024;

test("a 32 MiB listing is refused unread, names the store, and memory stays under 200 MB", async () => {
  const huge = listObjectsXml(
    "b",
    Array.from({ length: 200_000 }, (_, i) => `key-${i}-${"x".repeat(100)}`),
  );
  expect(huge.length).toBeGreaterThan(32 * MiB);
  fake.handle(() => ({ body: huge }));
  const r = await call(session.client, "list_objects", { bucket_name: "b" });
  expect(r.isError).toBe(true);
  expect(textOf(r)).toContain("ResponseTooLarge");
  expect(textOf(r)).toContain(fake.endpoint);
  expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThan(10_000);

  fake.handle(() => ({
    body: listBucketsXml(Array.from({ length: 400_000 }, (_, i) => `bucket-${i}-${"y".repeat(60)}`)),
  }));
  const b = await call(session.client, "list_buckets", {});
  expect(b.isError).toBe(true);
  expect(textOf(b)).toContain("ResponseTooLarge");
  expect(peakRss(session.pid)).toBeLessThan(200 * MiB);
});

test("results never exceed what was asked: max_keys, and a bucket-count limit", async () => {
  fake.handle(() => ({
    body: listObjectsXml(
      "b",
      Array.from({ length: 50 }, (_, i) => `k${i}`),
    ),
  }));
  const r = await call(session.client, "list_objects", { bucket_name: "b", max_keys: 5 });
  expect(r.isError).toBeFalsy();
  expect(r.structuredContent!.objects.length).toBe(5);
  expect(r.structuredContent!.is_truncated).toBe(true);

  fake.handle(() => ({ body: listBucketsXml(Array.from({ length: 5000 }, (_, i) => `bucket-${i}`)) }));
  const b = await call(session.client, "list_buckets", {});
  expect(b.structuredContent!.buckets.length).toBe(1000);
  // A store that ignores MaxBuckets: the page is cut here and continued with a token of ours, in name order.
  expect(b.structuredContent!.next_continuation_token).toMatch(/^lb1\./);
  expect(textOf(b)).toContain("More buckets follow");
  const seen = new Set<string>(b.structuredContent!.buckets.map((x: { name: string }) => x.name));
  for (let token = b.structuredContent!.next_continuation_token; token; ) {
    const page = await call(session.client, "list_buckets", { continuation_token: token });
    for (const x of page.structuredContent!.buckets) seen.add(x.name);
    token = page.structuredContent!.next_continuation_token;
  }
  expect(seen.size).toBe(5000);
});

test("a corrupted body of the right length is refused; nothing lands at local_path", async () => {
  const good = "the real content, 37 bytes long.....";
  const bad = good.replace("real", "FAKE");
  fake.handle(() => ({ headers: { etag: `"${md5(good)}"`, "content-type": "text/plain" }, body: bad }));
  const read = await call(session.client, "get_object", { bucket_name: "b", object_key: "k.txt" });
  expect(read.isError).toBe(true);
  expect(textOf(read)).toContain("IntegrityCheckFailed");
  const down = await call(session.client, "get_object", {
    bucket_name: "b",
    object_key: "k.txt",
    mode: "download",
    local_path: "in/k.txt",
  });
  expect(down.isError).toBe(true);
  expect(textOf(down)).toContain("IntegrityCheckFailed");
  expect(readdirSync(join(dir, "in"))).toEqual(["up.txt"]);
});

test("listed small objects read whole by one GET are checked too: download_prefix takes the honest one and refuses the corrupted one, search_objects stops at it", async () => {
  const good = "line one\nthe needle is here\n";
  const bad = good.replace("needle", "NEEDLE");
  const bodies: Record<string, string> = { "small/ok.txt": good, "small/bad.txt": bad };
  fake.handle((req) => {
    if (req.query.get("list-type") === "2")
      return {
        body: xml(
          `<ListBucketResult><Name>b</Name><Prefix>small/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${Object.keys(
            bodies,
          )
            .map(
              (key) =>
                `<Contents><Key>${key}</Key><LastModified>2026-11-02T00:00:00.000Z</LastModified><ETag>"${md5(good)}"</ETag><Size>${good.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
            )
            .join("")}</ListBucketResult>`,
        ),
      };
    const body = bodies[req.path.replace(/^\/b\//, "")];
    if (req.method !== "GET" || body === undefined || req.headers.range)
      return { status: 400, body: xml("<Error><Code>InvalidRequest</Code></Error>") };
    return { headers: { etag: `"${md5(good)}"`, "content-type": "text/plain" }, body };
  });
  const down = await call(session.client, "download_prefix", {
    bucket_name: "b",
    prefix: "small/",
    local_dir: "small",
  });
  const got = down.structuredContent as {
    counts: { done: number; failed: number };
    problems: { name: string; code: string }[];
  };
  expect(got.counts, textOf(down)).toMatchObject({ done: 1, failed: 1 });
  expect(got.problems).toEqual([expect.objectContaining({ name: "small/bad.txt", code: "IntegrityCheckFailed" })]);
  // The honest file whole, nothing of the corrupted one (not even a hidden temp file).
  expect(readdirSync(join(dir, "small"))).toEqual(["ok.txt"]);
  // A search stops at the corrupted object and names it: no match is reported from bytes that failed their check.
  const found = await call(session.client, "search_objects", { bucket_name: "b", prefix: "small/", pattern: "needle" });
  expect(found.isError).toBe(true);
  expect(textOf(found)).toStartWith("s3://b/small/bad.txt: IntegrityCheckFailed");
  // Each object in one GET without a range: the path that hands its bytes on from memory.
  const gets = fake.requests.filter((q) => q.method === "GET" && q.path.startsWith("/b/small/"));
  expect(gets.length).toBeGreaterThanOrEqual(4);
  expect(gets.every((q) => q.headers.range === undefined)).toBe(true);
});

test("a store checksum header that does not match is refused", async () => {
  const body = "checksummed body";
  const wrong = createHash("sha256").update("something else").digest("base64");
  fake.handle(() => ({ headers: { etag: `"abc-2"`, "x-amz-checksum-sha256": wrong }, body }));
  const down = await call(session.client, "get_object", {
    bucket_name: "b",
    object_key: "c.bin",
    mode: "download",
    local_path: "in/c.bin",
  });
  expect(down.isError).toBe(true);
  expect(textOf(down)).toContain("IntegrityCheckFailed");
  expect(existsSync(join(dir, "in", "c.bin"))).toBe(false);
});

test("a short close-delimited body is not reported as an empty object", async () => {
  const whole = "0123456789".repeat(100);
  fake.handle(() => ({
    headers: { etag: `"${md5(whole)}"`, "content-type": "text/plain" },
    body: whole.slice(0, 400),
    framing: "close",
  }));
  const read = await call(session.client, "get_object", { bucket_name: "b", object_key: "short.txt" });
  expect(read.isError).toBe(true);
  expect(textOf(read)).toContain("UnverifiableBody");
  expect(read.structuredContent?.size).not.toBe(0);
  const down = await call(session.client, "get_object", {
    bucket_name: "b",
    object_key: "short.txt",
    mode: "download",
    local_path: "in/short.txt",
  });
  expect(down.isError).toBe(true);
  expect(existsSync(join(dir, "in", "short.txt"))).toBe(false);
  // Without a length or chunked framing, a body cannot be verified: refused, not guessed.
  fake.handle(() => ({ headers: { etag: `"abc-3"`, "content-type": "text/plain" }, body: whole, framing: "close" }));
  const unverifiable = await call(session.client, "get_object", {
    bucket_name: "b",
    object_key: "nolength.txt",
    mode: "download",
    local_path: "in/nolength.txt",
  });
  expect(unverifiable.isError).toBe(true);
  expect(textOf(unverifiable)).toContain("UnverifiableBody");
});

test("a body cut before its Content-Length is reported as incomplete, not as an unreachable endpoint", async () => {
  const whole = "z".repeat(100_000);
  fake.handle(() => ({ headers: { etag: `"${md5(whole)}"` }, body: whole, cutAfter: 40_000 }));
  for (const args of [{}, { mode: "download", local_path: "in/cut.bin" }]) {
    const r = await call(session.client, "get_object", { bucket_name: "b", object_key: "cut.bin", ...args });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("IncompleteBody");
    expect(textOf(r)).not.toContain("could not be reached");
  }
  expect(existsSync(join(dir, "in", "cut.bin"))).toBe(false);
});

test("an upload whose returned ETag is not the MD5 of what was sent is an error", async () => {
  fake.handle((req) =>
    req.method === "PUT"
      ? { headers: { etag: `"${md5("not what was sent")}"` } }
      : { status: 404, body: xml("<Error><Code>NoSuchKey</Code></Error>") },
  );
  const r = await call(session.client, "upload_file", {
    local_file_path: "in/up.txt",
    bucket_name: "b",
    object_key: "up.txt",
  });
  expect(r.isError).toBe(true);
  expect(textOf(r)).toContain("IntegrityCheckFailed");
  // What was sent carried its MD5, so a real store checks the body itself too.
  const put = fake.requests.findLast((q) => q.method === "PUT")!;
  expect(put.headers["content-md5"]).toBe(createHash("md5").update("upload me").digest("base64"));
});

test("a listing that trickles fails at the operation deadline, and the server keeps serving", async () => {
  fake.handle(() => ({
    body: listObjectsXml(
      "b",
      Array.from({ length: 100 }, (_, i) => `k${i}`),
    ),
    trickle: { bytes: 10, everyMs: 200 },
  }));
  // A deadline of 3 s: the 100-key listing, 10 bytes every 200 ms, would take ~100 s without one.
  const deadlined = await connectBinary({ env: fakeEnv(fake, { STORE_OPERATION_TIMEOUT_MS: "3000" }) });
  try {
    const started = Date.now();
    const r = await call(deadlined.client, "list_objects", { bucket_name: "b" });
    const took = Date.now() - started;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("Timeout");
    expect(took).toBeLessThan(20_000);
    fake.handle(() => ({ body: listObjectsXml("b", ["alive"]) }));
    const after = await call(deadlined.client, "list_objects", { bucket_name: "b" });
    expect(after.structuredContent!.objects[0].key).toBe("alive");
  } finally {
    await deadlined.close();
  }
}, 30_000);

test("a download whose store stops sending mid-body fails at the idle timeout: nothing kept, the server keeps serving", async () => {
  const stalled = await connectBinary({
    env: fakeEnv(fake, { STORE_REQUEST_TIMEOUT_MS: "1500" }),
    args: ["--allowed-dir", dir],
  });
  try {
    const whole = "s".repeat(200_000);
    // 50 KB, then nothing for far longer than the idle timeout.
    fake.handle(() => ({
      headers: { etag: `"${md5(whole)}"` },
      body: whole,
      trickle: { bytes: 50_000, everyMs: 30_000 },
    }));
    const started = Date.now();
    const r = await call(stalled.client, "get_object", {
      bucket_name: "b",
      object_key: "stall.bin",
      mode: "download",
      local_path: "in/stall.bin",
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("IncompleteBody");
    expect(textOf(r)).toContain("stopped sending");
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(existsSync(join(dir, "in", "stall.bin"))).toBe(false);
    fake.handle(() => ({ body: listObjectsXml("b", ["alive"]) }));
    expect((await call(stalled.client, "list_objects", { bucket_name: "b" })).structuredContent!.objects[0].key).toBe(
      "alive",
    );
  } finally {
    await stalled.close();
  }
}, 30_000);
