/**
 * Network and store faults, injected by a TCP proxy between the compiled
 * binary and Ceph RGW: each ends in a clear error or a success, never a hang,
 * a partial file, a clobbered file or a dangling multipart upload.
 */

import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HeadObjectCommand, ListMultipartUploadsCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
let proxy: FaultProxy;
let bucket: string;
let dir: string;
let session: Awaited<ReturnType<typeof connectBinary>> | undefined;

beforeAll(async () => {
  proxy = await startFaultProxy(s3().endpoint);
  bucket = await freshBucket("faults");
  dir = tempDir("faults");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "eight.bin", Body: randomBytes(8 * MiB, 3) }));
  writeFileSync(join(dir, "one.bin"), randomBytes(MiB, 4));
  writeFileSync(join(dir, "forty.bin"), randomBytes(40 * MiB, 6));
}, 60_000);

afterEach(async () => {
  await session?.close();
  session = undefined;
  proxy.set({ kind: "pass" });
});

afterAll(() => proxy.stop());

/** The binary, pointed at the proxy, with short timeouts so faults show fast. */
async function binaryThroughProxy(env: Record<string, string> = {}) {
  session = await connectBinary({
    env: {
      ...s3Env(),
      STORE_ENDPOINT_URL: proxy.endpoint,
      STORE_REQUEST_TIMEOUT_MS: "1500",
      STORE_CONNECT_TIMEOUT_MS: "1500",
      ...env,
    },
    args: ["--allowed-dir", dir],
  });
  return session.client;
}

async function noUploadsLeft(): Promise<void> {
  // Clean-up races the error reply by a few milliseconds at most.
  let uploads: unknown[] = [];
  for (let i = 0; i < 10; i++) {
    uploads = (await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
    if (uploads.length === 0) return;
    await Bun.sleep(200);
  }
  expect(uploads).toEqual([]);
}

async function objectExists(key: string): Promise<boolean> {
  return sdkClient()
    .send(new HeadObjectCommand({ Bucket: bucket, Key: key }))
    .then(
      () => true,
      () => false,
    );
}

describe("unreachable or silent endpoint", () => {
  test("refused connections: a clear network error, then the server serves again once the store is back", async () => {
    const client = await binaryThroughProxy({ STORE_MAX_ATTEMPTS: "2" });
    proxy.set({ kind: "refuse" });
    const r = await call(client, "list_buckets");
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/ECONNRESET|ECONNREFUSED|socket hang up|could not be reached/);
    expect(textOf(r)).toContain("STORE_ENDPOINT_URL");
    proxy.set({ kind: "pass" });
    expect((await call(client, "list_buckets")).isError).toBeFalsy();
  });

  test("a blackholed endpoint: isError within attempts × the request timeout, not a hang", async () => {
    const client = await binaryThroughProxy({ STORE_MAX_ATTEMPTS: "2", STORE_REQUEST_TIMEOUT_MS: "1000" });
    proxy.set({ kind: "blackhole" });
    const started = Date.now();
    const r = await call(client, "list_objects", { bucket_name: bucket });
    const took = Date.now() - started;
    expect(r.isError).toBe(true);
    expect(r.structuredContent?.error?.code ?? textOf(r)).toMatch(/Timeout/);
    // 2 attempts of 1 s plus back-off; far below the MCP client's own 60 s timeout.
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(10_000);
  });

  test("a blackholed endpoint with the default attempts and idle timeout fails at the operation deadline", async () => {
    // Before the deadline existed: 3 attempts × 60 s idle = 189 s, long after any client gave up.
    const client = await binaryThroughProxy({
      STORE_OPERATION_TIMEOUT_MS: "4000",
      STORE_REQUEST_TIMEOUT_MS: "60000",
      STORE_CONNECT_TIMEOUT_MS: "5000",
    });
    proxy.set({ kind: "blackhole" });
    const started = Date.now();
    const r = await call(client, "list_buckets");
    const took = Date.now() - started;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("Timeout");
    expect(textOf(r)).toContain("STORE_OPERATION_TIMEOUT_MS");
    expect(took).toBeGreaterThanOrEqual(3_900);
    expect(took).toBeLessThan(8_000);
  }, 20_000);

  test("many transfers in flight do not make a listing wait for a free socket", async () => {
    const client = await binaryThroughProxy();
    proxy.set({ kind: "throttle", bytesPerSecond: 2 * MiB });
    const downloads = Array.from({ length: 20 }, (_, i) =>
      call(client, "get_object", {
        bucket_name: bucket,
        object_key: "eight.bin",
        mode: "download",
        local_path: join(dir, `many-${i}.bin`),
      }),
    );
    await Bun.sleep(500);
    const listed = await call(client, "list_objects", { bucket_name: bucket });
    expect(listed.isError).toBeFalsy();
    const results = await Promise.all(downloads);
    for (const r of results) expect(r.isError).toBeFalsy();
  }, 60_000);

  test("a slow (but answering) endpoint is waited for", async () => {
    const client = await binaryThroughProxy();
    proxy.set({ kind: "delay", ms: 700 });
    const r = await call(client, "list_objects", { bucket_name: bucket });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent?.objects.map((o: { key: string }) => o.key)).toContain("eight.bin");
  });
});

describe("5xx bursts", () => {
  for (const [status, code] of [
    [503, "SlowDown"],
    [500, "InternalError"],
  ] as const) {
    test(`${status} ${code} × 2 with 3 attempts: retried, the call succeeds`, async () => {
      const client = await binaryThroughProxy({ STORE_MAX_ATTEMPTS: "3" });
      proxy.set({ kind: "http-error", status, code, count: 2 });
      const before = proxy.stats.errorsAnswered;
      const r = await call(client, "get_object", {
        bucket_name: bucket,
        object_key: "eight.bin",
        max_content_size: 16,
      });
      expect(r.isError).toBeFalsy();
      expect(proxy.stats.errorsAnswered - before).toBe(2);
    });

    test(`${status} ${code} longer than the retry budget: a clear error naming the code`, async () => {
      const client = await binaryThroughProxy({ STORE_MAX_ATTEMPTS: "3" });
      proxy.set({ kind: "http-error", status, code, count: 100 });
      const before = proxy.stats.errorsAnswered;
      const r = await call(client, "list_objects", { bucket_name: bucket });
      expect(r.isError).toBe(true);
      expect(proxy.stats.errorsAnswered - before).toBe(3);
      const text = textOf(r);
      expect(text).toContain(code);
      expect(text).toContain(String(status));
      expect(text).toContain(`s3://${bucket}`);
      expect(text).toMatch(/retry later/i);
    });
  }
});

describe("connection cut mid-transfer", () => {
  test("mid-download to a new path: isError, nothing at local_path, no temp file", async () => {
    const client = await binaryThroughProxy({ STORE_MAX_ATTEMPTS: "1" });
    proxy.set({ kind: "cut", direction: "response", afterBytes: 1 * MiB });
    const r = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "eight.bin",
      mode: "download",
      local_path: "cut-new/eight.bin",
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`s3://${bucket}/eight.bin`);
    expect(readdirSync(dir).includes("cut-new") ? readdirSync(join(dir, "cut-new")) : []).toEqual([]);
  });

  test("mid-download over an existing file (overwrite: true): the old file is untouched, no temp file", async () => {
    const client = await binaryThroughProxy({ STORE_MAX_ATTEMPTS: "1" });
    writeFileSync(join(dir, "keep.txt"), "the user's file\n");
    proxy.set({ kind: "cut", direction: "response", afterBytes: 1 * MiB });
    const r = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "eight.bin",
      mode: "download",
      local_path: "keep.txt",
      overwrite: true,
    });
    expect(r.isError).toBe(true);
    expect(readFileSync(join(dir, "keep.txt"), "utf8")).toBe("the user's file\n");
    expect(readdirSync(dir).filter((f) => f.endsWith(".partial"))).toEqual([]);
  });

  test("mid-upload of a single-part file: isError, no object, no multipart upload", async () => {
    const client = await binaryThroughProxy({ STORE_MAX_ATTEMPTS: "2" });
    proxy.set({ kind: "cut", direction: "request", afterBytes: 256 * 1024 });
    const r = await call(client, "upload_file", {
      local_file_path: "one.bin",
      bucket_name: bucket,
      object_key: "cut-single.bin",
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`s3://${bucket}/cut-single.bin`);
    proxy.set({ kind: "pass" });
    expect(await objectExists("cut-single.bin")).toBe(false);
    await noUploadsLeft();
  });

  test("mid-upload of a multipart file: isError, no object, the multipart upload is aborted", async () => {
    const client = await binaryThroughProxy({ STORE_MAX_ATTEMPTS: "2" });
    // Every connection dies after 3 MiB: no 8 MiB part can get through.
    proxy.set({ kind: "cut", direction: "request", afterBytes: 3 * MiB });
    const r = await call(client, "upload_file", {
      local_file_path: "forty.bin",
      bucket_name: bucket,
      object_key: "cut-multi.bin",
    });
    expect(r.isError).toBe(true);
    proxy.set({ kind: "pass" });
    expect(await objectExists("cut-multi.bin")).toBe(false);
    await noUploadsLeft();
  }, 60_000);

  test("a cut that a retry heals: the multipart upload completes byte-identical", async () => {
    const client = await binaryThroughProxy({ STORE_MAX_ATTEMPTS: "3", STORE_REQUEST_TIMEOUT_MS: "30000" });
    // The first connection to carry 4 MiB dies halfway through a part; the SDK retries that part on a fresh one.
    proxy.set({ kind: "cut", direction: "request", afterBytes: 4 * MiB, once: true });
    const cutsBefore = proxy.stats.cuts;
    const r = await call(client, "upload_file", {
      local_file_path: "forty.bin",
      bucket_name: bucket,
      object_key: "healed.bin",
    });
    expect(r.isError ? textOf(r) : "ok").toBe("ok");
    expect(proxy.stats.cuts).toBeGreaterThan(cutsBefore);
    proxy.set({ kind: "pass" });
    const back = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "healed.bin",
      mode: "download",
      local_path: "healed.bin",
    });
    expect(back.isError).toBeFalsy();
    expect(sha256(readFileSync(join(dir, "healed.bin")))).toBe(sha256(readFileSync(join(dir, "forty.bin"))));
    await noUploadsLeft();
  }, 60_000);

  test("a lost answer to CreateMultipartUpload: the retry's orphan is aborted, the upload completes", async () => {
    const client = await binaryThroughProxy({ STORE_MAX_ATTEMPTS: "3", STORE_REQUEST_TIMEOUT_MS: "30000" });
    // The store creates the upload, but its answer never arrives: the SDK retries and a second upload is created.
    proxy.set({ kind: "cut", direction: "response", afterBytes: 0, once: true });
    const r = await call(client, "upload_file", {
      local_file_path: "forty.bin",
      bucket_name: bucket,
      object_key: "lost-answer.bin",
    });
    expect(r.isError).toBeFalsy();
    expect(proxy.stats.cuts).toBeGreaterThan(0);
    proxy.set({ kind: "pass" });
    expect(await objectExists("lost-answer.bin")).toBe(true);
    await noUploadsLeft();
  }, 60_000);
});
