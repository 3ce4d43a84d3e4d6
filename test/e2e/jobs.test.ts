/**
 * Long calls past the call budget, through the compiled binary against Ceph
 * RGW behind a slow link (the WAN model with a long delay and a small window):
 * an upload and a download answer with a job handle before the budget's end,
 * job_status waits for the result exactly as the call would have given it
 * (byte-exact at the other end), cancel_job leaves nothing behind, another
 * caller's job id is unknown, and a client that gives up before the transfer
 * ends still gets it by following `next`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GetObjectCommand, ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startWanProxy, type WanProxy } from "../../scripts/bench/wan-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { connectHttp, startHttpBinary } from "../helpers/http.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
const SIZE = 24 * MiB;
let wan: WanProxy;
let dir: string;
let bucket: string;
let data: Uint8Array;
const md5 = (b: Uint8Array) => createHash("md5").update(b).digest("hex");

beforeAll(async () => {
  // ~2.5 MiB/s a connection each way: a 24 MiB transfer takes several seconds, a budget of 1 s hands it back.
  wan = await startWanProxy(s3().endpoint, { delayMs: 50, windowBytes: 128 * 1024 });
  dir = tempDir("jobs");
  data = randomBytes(SIZE, 7);
  writeFileSync(join(dir, "big.bin"), data);
  bucket = await freshBucket("jobs");
}, 60_000);
afterAll(() => wan?.stop());

const slowEnv = () => ({ ...s3Env(), STORE_ENDPOINT_URL: wan.endpoint, STORE_CALL_BUDGET_SECONDS: "1" });
const openUploads = async () => (await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];

/** Follows `next` as a model would: job_status until the job is no longer running. */
async function untilDone(client: Awaited<ReturnType<typeof connectBinary>>["client"], jobId: string) {
  for (let i = 0; i < 120; i++) {
    const status = await call(client, "job_status", { job_id: jobId });
    expect(status.isError, textOf(status)).toBeFalsy();
    if (status.structuredContent!.job.state !== "running") return status;
    expect(status.structuredContent!.next).toContain("job_status");
  }
  throw new Error("the job never ended");
}

describe("past the call budget", () => {
  test("upload_file answers with a job; job_status gives the upload's own result; the object is byte-exact; list_jobs shows it", async () => {
    const { client, close } = await connectBinary({ env: slowEnv(), args: ["--allowed-dir", dir] });
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      for (const name of ["job_status", "cancel_job", "list_jobs"]) expect(tools).toContain(name);
      const started = performance.now();
      const handed = await call(client, "upload_file", { local_file_path: "big.bin", bucket_name: bucket, object_key: "up/big.bin" });
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(handed.isError, textOf(handed)).toBeFalsy();
      const job = handed.structuredContent!.job;
      expect(job).toMatchObject({ state: "running", tool: "upload_file" });
      expect(job.id).toMatch(/^job_[A-Za-z0-9_-]{20,}$/);
      expect(handed.structuredContent!.next).toContain(job.id);
      expect(textOf(handed)).toContain("Still running upload_file");
      const done = await untilDone(client, job.id);
      expect(done.structuredContent).toMatchObject({ job: { id: job.id, state: "done" }, bucket, key: "up/big.bin", size: SIZE });
      const body = await (await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: "up/big.bin" }))).Body!.transformToByteArray();
      expect(md5(body)).toBe(md5(data));
      const listed = await call(client, "list_jobs", {});
      expect(listed.structuredContent!.jobs[0]).toMatchObject({ id: job.id, state: "done", tool: "upload_file" });
      expect(await openUploads()).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);

  test("get_object download answers with a job; the file lands whole, no temp file left", async () => {
    const { client, close } = await connectBinary({ env: slowEnv(), args: ["--allowed-dir", dir] });
    try {
      const handed = await call(client, "get_object", { bucket_name: bucket, object_key: "up/big.bin", mode: "download", local_path: "down.bin" });
      expect(handed.structuredContent!.job).toMatchObject({ state: "running", tool: "get_object" });
      const done = await untilDone(client, handed.structuredContent!.job.id);
      expect(done.structuredContent).toMatchObject({ job: { state: "done" }, mode: "download" });
      expect(md5(readFileSync(join(dir, "down.bin")))).toBe(md5(data));
      expect(readdirSync(dir).filter((n) => n.endsWith(".partial"))).toEqual([]);
      // A read is bounded by max_content_size: never handed back.
      const read = await call(client, "get_object", { bucket_name: bucket, object_key: "up/big.bin", max_content_size: 1024, include_binary: true });
      expect(read.structuredContent!.job).toBeUndefined();
    } finally {
      await close();
    }
  }, 120_000);

  test("cancel_job mid-upload: cancelled, nothing at the key, no multipart upload left; job_status says cancelled; an unknown id is NoSuchJob", async () => {
    const { client, close } = await connectBinary({ env: slowEnv(), args: ["--allowed-dir", dir] });
    try {
      const handed = await call(client, "upload_file", { local_file_path: "big.bin", bucket_name: bucket, object_key: "cancelled/big.bin" });
      const id = handed.structuredContent!.job.id;
      const cancelled = await call(client, "cancel_job", { job_id: id });
      expect(cancelled.structuredContent).toMatchObject({ job: { id, state: "cancelled" } });
      expect((await call(client, "job_status", { job_id: id })).structuredContent!.job.state).toBe("cancelled");
      expect(await openUploads()).toEqual([]);
      await expect(sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: "cancelled/big.bin" }))).rejects.toThrow();
      const unknown = await call(client, "job_status", { job_id: "job_nope" });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toContain("NoSuchJob");
    } finally {
      await close();
    }
  }, 120_000);

  test("a client that gives up after 3 s gets the job before then and the result by following next", async () => {
    const { client, close } = await connectBinary({ env: slowEnv(), args: ["--allowed-dir", dir] });
    try {
      const handed = await client.callTool({ name: "upload_file", arguments: { local_file_path: "big.bin", bucket_name: bucket, object_key: "impatient/big.bin" } }, undefined, { timeout: 3_000 });
      const done = await untilDone(client, (handed.structuredContent as { job: { id: string } }).job.id);
      expect(done.structuredContent).toMatchObject({ job: { state: "done" }, size: SIZE });
    } finally {
      await close();
    }
  }, 120_000);

  test("with the budget off (0) there is no job: the call runs to its end, and the job tools are not offered", async () => {
    const { client, close } = await connectBinary({ env: { ...slowEnv(), STORE_CALL_BUDGET_SECONDS: "0" }, args: ["--allowed-dir", dir] });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("job_status");
      const r = await call(client, "upload_file", { local_file_path: "big.bin", bucket_name: bucket, object_key: "nobudget/big.bin" });
      expect(r.structuredContent).toMatchObject({ size: SIZE });
      expect(r.structuredContent!.job).toBeUndefined();
    } finally {
      await close();
    }
  }, 120_000);
});

test("remote mode: a job belongs to its caller — another caller's job id is NoSuchJob", async () => {
  const ALICE = "alice-jobs-token-0123456789";
  const BOB = "bob-jobs-token-0123456789ab";
  const server = await startHttpBinary({ env: { ...slowEnv(), STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}` }, args: ["--allowed-dir", dir] });
  try {
    const alice = await connectHttp(server.url, ALICE);
    const bob = await connectHttp(server.url, BOB);
    const handed = await call(alice, "upload_file", { local_file_path: "big.bin", bucket_name: bucket, object_key: "remote/big.bin" });
    const id = handed.structuredContent!.job.id;
    const theirs = await call(bob, "job_status", { job_id: id });
    expect(theirs.isError).toBe(true);
    expect(textOf(theirs)).toContain("NoSuchJob");
    expect(textOf(await call(bob, "cancel_job", { job_id: id }))).toContain("NoSuchJob");
    expect((await call(bob, "list_jobs", {})).structuredContent!.jobs).toEqual([]);
    const done = await untilDone(alice as never, id);
    expect(done.structuredContent).toMatchObject({ job: { state: "done" }, size: SIZE });
    await Promise.all([alice.close(), bob.close()]);
  } finally {
    await server.stop();
  }
}, 120_000);

describe("bulk work and copies between stores past the call budget", () => {
  test("upload_directory and download_prefix of 1,000 files each hand back a job; the model following next gets every file, nothing left behind", async () => {
    const tree = join(dir, "tree");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(tree, "d"), { recursive: true });
    for (let i = 0; i < 1000; i++) writeFileSync(join(tree, "d", `f${String(i).padStart(4, "0")}.txt`), `file ${i} `.repeat(40));
    const { client, close } = await connectBinary({ env: slowEnv(), args: ["--allowed-dir", dir] });
    try {
      const up = await call(client, "upload_directory", { local_dir: "tree", bucket_name: bucket, prefix: "tree" });
      expect(up.structuredContent!.job, textOf(up)).toMatchObject({ state: "running", tool: "upload_directory" });
      const uploaded = await untilDone(client, up.structuredContent!.job.id);
      expect(uploaded.structuredContent).toMatchObject({ job: { state: "done" }, complete: true, counts: { done: 1000, failed: 0 } });
      const down = await call(client, "download_prefix", { bucket_name: bucket, prefix: "tree/", local_dir: "back" });
      expect(down.structuredContent!.job, textOf(down)).toMatchObject({ state: "running", tool: "download_prefix" });
      const downloaded = await untilDone(client, down.structuredContent!.job.id);
      expect(downloaded.structuredContent).toMatchObject({ job: { state: "done" }, complete: true, counts: { done: 1000, failed: 0 } });
      expect(readdirSync(join(dir, "back", "d")).length).toBe(1000);
      expect(readFileSync(join(dir, "back", "d", "f0999.txt"), "utf8")).toBe("file 999 ".repeat(40));
      expect(readdirSync(join(dir, "back"), { recursive: true }).map(String).filter((n) => n.endsWith(".partial"))).toEqual([]);
      expect(await openUploads()).toEqual([]);
    } finally {
      await close();
    }
  }, 180_000);

  test("a copy from a slow store to another hands back a job and lands byte-exact", async () => {
    const server = s3();
    const env = { ...slowEnv(), STORE_STORES: "other", STORE_OTHER_ENDPOINT_URL: server.endpoint, STORE_OTHER_ACCESS_KEY_ID: server.other!.accessKeyId, STORE_OTHER_SECRET_ACCESS_KEY: server.other!.secretAccessKey, STORE_OTHER_REGION: server.region };
    const { client, close } = await connectBinary({ env, args: ["--allowed-dir", dir] });
    try {
      const theirs = `t-jobs-other-${Date.now().toString(36)}`;
      expect((await call(client, "create_bucket", { bucket_name: theirs, store: "other" })).isError).toBeFalsy();
      const copy = await call(client, "copy_object", { source_store: "default", source_bucket: bucket, source_key: "up/big.bin", store: "other", bucket_name: theirs, object_key: "big.bin" });
      expect(copy.structuredContent!.job, textOf(copy)).toMatchObject({ state: "running", tool: "copy_object" });
      const done = await untilDone(client, copy.structuredContent!.job.id);
      expect(done.structuredContent).toMatchObject({ job: { state: "done" }, size: SIZE });
      const { S3Client, GetObjectCommand: Get } = await import("@aws-sdk/client-s3");
      const other = new S3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: { accessKeyId: server.other!.accessKeyId, secretAccessKey: server.other!.secretAccessKey } });
      const body = await (await other.send(new Get({ Bucket: theirs, Key: "big.bin" }))).Body!.transformToByteArray();
      expect(md5(body)).toBe(md5(data));
    } finally {
      await close();
    }
  }, 180_000);
});
