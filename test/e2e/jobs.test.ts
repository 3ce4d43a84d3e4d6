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
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListPartsCommand } from "@aws-sdk/client-s3";
import { startWanProxy, type WanProxy } from "../../scripts/bench/wan-proxy.ts";
import { startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { connectHttp, startHttpBinary } from "../helpers/http.ts";
import { keptRecords } from "../helpers/kept.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";
import { otherClient } from "../helpers/several-stores.ts";

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
  // The download and the copy read this object, not the one the upload test writes: a failure there stays there.
  const { PutObjectCommand } = await import("@aws-sdk/client-s3");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "seed/big.bin", Body: data }));
}, 60_000);
afterAll(() => wan?.stop());

/** The second Ceph user as the store "other", on the direct link (the slow one is the default store's). */
const otherStoreEnv = () => {
  const server = s3();
  return {
    STORE_STORES: "other",
    STORE_OTHER_ENDPOINT_URL: server.endpoint,
    STORE_OTHER_ACCESS_KEY_ID: server.other!.accessKeyId,
    STORE_OTHER_SECRET_ACCESS_KEY: server.other!.secretAccessKey,
    STORE_OTHER_REGION: server.region,
  };
};
const slowEnv = () => ({ ...s3Env(), STORE_ENDPOINT_URL: wan.endpoint, STORE_CALL_BUDGET_SECONDS: "1" });
/** The multipart uploads open under `prefix`: each test looks at its own keys only. */
const openUploads = async (prefix: string) =>
  (await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }))).Uploads ?? [];

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
    // Each connection's request bytes held after 1 MiB until released: the parts stay in flight, none can be stored,
    // however loaded the machine is.
    const gate = await startFaultProxy(s3().endpoint);
    gate.set({ kind: "hold", afterBytes: MiB });
    const { client, close } = await connectBinary({
      env: { ...slowEnv(), STORE_ENDPOINT_URL: gate.endpoint },
      args: ["--allowed-dir", dir],
    });
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      for (const name of ["job_status", "cancel_job", "list_jobs"]) expect(tools).toContain(name);
      const started = performance.now();
      const handed = await call(client, "upload_file", {
        local_file_path: "big.bin",
        bucket_name: bucket,
        object_key: "up/big.bin",
      });
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(handed.isError, textOf(handed)).toBeFalsy();
      const job = handed.structuredContent!.job;
      expect(job).toMatchObject({ state: "running", tool: "upload_file" });
      expect(job.id).toMatch(/^job_[A-Za-z0-9_-]{20,}$/);
      expect(handed.structuredContent!.next).toContain(job.id);
      expect(textOf(handed)).toContain("Still running upload_file");
      // The size is there from the first status, and the bytes count as they are sent, before the store holds any part.
      expect(job.progress).toMatchObject({ total_bytes: SIZE });
      let sent = 0;
      for (let tries = 0; sent === 0; tries++) {
        // No part can be stored while the gate holds them: bytes counted only as parts complete would stay at 0.
        expect(tries).toBeLessThan(100);
        const status = await call(client, "job_status", { job_id: job.id });
        sent = status.structuredContent!.job.progress.done_bytes;
        expect(status.structuredContent!.job.state).toBe("running");
      }
      const [upload] = await openUploads("up/");
      const stored = await sdkClient().send(
        new ListPartsCommand({ Bucket: bucket, Key: "up/big.bin", UploadId: upload!.UploadId }),
      );
      expect(stored.Parts ?? []).toEqual([]);
      expect(sent).toBeLessThan(SIZE);
      gate.release();
      const done = await untilDone(client, job.id);
      expect(done.structuredContent).toMatchObject({
        job: { id: job.id, state: "done" },
        bucket,
        key: "up/big.bin",
        size: SIZE,
      });
      const body = await (
        await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: "up/big.bin" }))
      ).Body!.transformToByteArray();
      expect(md5(body)).toBe(md5(data));
      const listed = await call(client, "list_jobs", {});
      expect(listed.structuredContent!.jobs[0]).toMatchObject({ id: job.id, state: "done", tool: "upload_file" });
      expect(await openUploads("up/")).toEqual([]);
    } finally {
      await close();
      await gate.stop();
    }
  }, 120_000);

  test("get_object download answers with a job; the file lands whole, no temp file left", async () => {
    const { client, close } = await connectBinary({ env: slowEnv(), args: ["--allowed-dir", dir] });
    try {
      const handed = await call(client, "get_object", {
        bucket_name: bucket,
        object_key: "seed/big.bin",
        mode: "download",
        local_path: "down.bin",
      });
      expect(handed.structuredContent!.job).toMatchObject({ state: "running", tool: "get_object" });
      const done = await untilDone(client, handed.structuredContent!.job.id);
      expect(done.structuredContent).toMatchObject({ job: { state: "done" }, mode: "download" });
      expect(md5(readFileSync(join(dir, "down.bin")))).toBe(md5(data));
      expect(readdirSync(dir).filter((n) => n.endsWith(".partial"))).toEqual([]);
      // A read is bounded by max_content_size: never handed back.
      const read = await call(client, "get_object", {
        bucket_name: bucket,
        object_key: "seed/big.bin",
        max_content_size: 1024,
        include_binary: true,
      });
      expect(read.structuredContent!.job).toBeUndefined();
    } finally {
      await close();
    }
  }, 120_000);

  test("cancel_job mid-upload: cancelled, nothing at the key, no multipart upload left; job_status says cancelled; an unknown id is NoSuchJob", async () => {
    const { client, close } = await connectBinary({ env: slowEnv(), args: ["--allowed-dir", dir] });
    try {
      const handed = await call(client, "upload_file", {
        local_file_path: "big.bin",
        bucket_name: bucket,
        object_key: "cancelled/big.bin",
      });
      const id = handed.structuredContent!.job.id;
      const cancelled = await call(client, "cancel_job", { job_id: id });
      expect(cancelled.structuredContent).toMatchObject({ job: { id, state: "cancelled" } });
      expect((await call(client, "job_status", { job_id: id })).structuredContent!.job.state).toBe("cancelled");
      expect(await openUploads("cancelled/")).toEqual([]);
      await expect(
        sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: "cancelled/big.bin" })),
      ).rejects.toThrow();
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
      const handed = await client.callTool(
        {
          name: "upload_file",
          arguments: { local_file_path: "big.bin", bucket_name: bucket, object_key: "impatient/big.bin" },
        },
        undefined,
        { timeout: 3_000 },
      );
      const done = await untilDone(client, (handed.structuredContent as { job: { id: string } }).job.id);
      expect(done.structuredContent).toMatchObject({ job: { state: "done" }, size: SIZE });
    } finally {
      await close();
    }
  }, 120_000);

  test("with the budget off (0) there is no job: the call runs to its end, and the job tools are not offered", async () => {
    const { client, close } = await connectBinary({
      env: { ...slowEnv(), STORE_CALL_BUDGET_SECONDS: "0" },
      args: ["--allowed-dir", dir],
    });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("job_status");
      const r = await call(client, "upload_file", {
        local_file_path: "big.bin",
        bucket_name: bucket,
        object_key: "nobudget/big.bin",
      });
      expect(r.structuredContent).toMatchObject({ size: SIZE });
      expect(r.structuredContent!.job).toBeUndefined();
    } finally {
      await close();
    }
  }, 120_000);
});

test("100 jobs started and abandoned by one caller, three times: memory stays flat, at most 100 kept, the newest first", async () => {
  const { PutObjectCommand } = await import("@aws-sdk/client-s3");
  await sdkClient().send(
    new PutObjectCommand({ Bucket: bucket, Key: "abandoned.bin", Body: randomBytes(1 * MiB, 71) }),
  );
  // A link of its own, eight times slower a connection (~320 KB/s): 1 MiB still outlasts the 1 s budget, and the 300
  // downloads relay 300 MiB through this process instead of the 2.4 GiB that 8 MiB objects on the shared link would.
  const slower = await startWanProxy(s3().endpoint, { delayMs: 50, windowBytes: 16 * 1024 });
  const { client, close, pid } = await connectBinary({
    env: { ...slowEnv(), STORE_ENDPOINT_URL: slower.endpoint },
    args: ["--allowed-dir", dir],
  });
  const rssMb = (field: "VmRSS" | "VmHWM") =>
    Number(
      /(\d+) kB/.exec(
        readFileSync(`/proc/${pid}/status`, "utf8")
          .split("\n")
          .find((l) => l.startsWith(field))!,
      )![1],
    ) / 1024;
  const round = async (n: number) => {
    const handed = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        call(client, "get_object", {
          bucket_name: bucket,
          object_key: "abandoned.bin",
          mode: "download",
          local_path: `abandoned/${n}-${i}.bin`,
        }),
      ),
    );
    // Many of them past the 1 s budget as jobs (how many depends on how busy the machine is: 40 to 100 seen).
    const count = handed.filter((r) => r.structuredContent?.job?.state === "running").length;
    const other = handed.find((r) => r.structuredContent?.job?.state !== "running");
    expect(count, other && JSON.stringify(other).slice(0, 600)).toBeGreaterThan(20);
    // Never asked for: wait until none runs, as a model that went away would not.
    for (let i = 0; i < 240; i++) {
      const jobs = (await call(client, "list_jobs", {})).structuredContent!.jobs as { state: string }[];
      if (!jobs.some((j) => j.state === "running")) return { jobs, count };
      await Bun.sleep(250);
    }
    throw new Error("the jobs never ended");
  };
  // The resident size once the server is idle: the least of several samples over two seconds (a collection may be due).
  const settledRss = async () => {
    let least = Infinity;
    for (let i = 0; i < 10; i++) {
      await Bun.sleep(200);
      least = Math.min(least, rssMb("VmRSS"));
    }
    return least;
  };
  try {
    expect((await call(client, "list_buckets")).isError).toBeFalsy();
    const first = await round(1);
    // The first hundred grows the heap to its working size; the next two hundred must not grow it further.
    const second = await round(2);
    const afterSecond = await settledRss();
    const third = await round(3);
    const afterThird = await settledRss();
    // Kept: at most 100 (the oldest ended dropped first); every one ended done.
    expect(first.jobs.length).toBe(Math.min(100, first.count));
    expect(second.jobs.length).toBe(Math.min(100, first.count + second.count));
    expect(third.jobs.length).toBe(100);
    expect(third.jobs.every((j) => j.state === "done")).toBe(true);
    // Flat: another hundred abandoned jobs costs no more than noise; the peak stays well within the server's budgets.
    expect(afterThird - afterSecond).toBeLessThan(50);
    expect(rssMb("VmHWM")).toBeLessThan(600);
    expect(readdirSync(join(dir, "abandoned")).filter((f) => f.endsWith(".partial"))).toEqual([]);
  } finally {
    await close();
    await slower.stop();
  }
}, 240_000);

test("remote mode: a job belongs to its caller — another caller's job id is NoSuchJob; an id no job here has logs the hint about replicas", async () => {
  const ALICE = "alice-jobs-token-0123456789";
  const BOB = "bob-jobs-token-0123456789ab";
  const server = await startHttpBinary({
    env: { ...slowEnv(), STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}` },
    args: ["--allowed-dir", dir],
  });
  try {
    const alice = await connectHttp(server.url, ALICE);
    const bob = await connectHttp(server.url, BOB);
    const handed = await call(alice, "upload_file", {
      local_file_path: "big.bin",
      bucket_name: bucket,
      object_key: "remote/big.bin",
    });
    const id = handed.structuredContent!.job.id;
    const theirs = await call(bob, "job_status", { job_id: id });
    expect(theirs.isError).toBe(true);
    expect(textOf(theirs)).toContain("NoSuchJob");
    expect(textOf(await call(bob, "cancel_job", { job_id: id }))).toContain("NoSuchJob");
    expect((await call(bob, "list_jobs", {})).structuredContent!.jobs).toEqual([]);
    // Another caller's job is no hint of another replica; a well-formed id no job here has is (one log line a minute).
    expect(server.stderr()).not.toContain("a job id this replica does not know");
    expect(textOf(await call(bob, "job_status", { job_id: "job_AAAAAAAAAAAAAAAAAAAAAA" }))).toContain("NoSuchJob");
    await Bun.sleep(100);
    expect(server.stderr()).toContain("a job id this replica does not know");
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
    for (let i = 0; i < 1000; i++)
      writeFileSync(join(tree, "d", `f${String(i).padStart(4, "0")}.txt`), `file ${i} `.repeat(40));
    const { client, close } = await connectBinary({ env: slowEnv(), args: ["--allowed-dir", dir] });
    try {
      const up = await call(client, "upload_directory", { local_dir: "tree", bucket_name: bucket, prefix: "tree" });
      expect(up.structuredContent!.job, textOf(up)).toMatchObject({ state: "running", tool: "upload_directory" });
      const uploaded = await untilDone(client, up.structuredContent!.job.id);
      expect(uploaded.structuredContent).toMatchObject({
        job: { state: "done" },
        complete: true,
        counts: { done: 1000, failed: 0 },
      });
      // Objects and bytes apart in the job's progress, each its own count.
      const bytes = Array.from({ length: 1000 }, (_, i) => `file ${i} `.length * 40).reduce((a, b) => a + b, 0);
      expect(uploaded.structuredContent!.job.progress).toMatchObject({
        done_objects: 1000,
        total_objects: 1000,
        done_bytes: bytes,
        total_bytes: bytes,
      });
      const down = await call(client, "download_prefix", { bucket_name: bucket, prefix: "tree/", local_dir: "back" });
      expect(down.structuredContent!.job, textOf(down)).toMatchObject({ state: "running", tool: "download_prefix" });
      const downloaded = await untilDone(client, down.structuredContent!.job.id);
      expect(downloaded.structuredContent).toMatchObject({
        job: { state: "done" },
        complete: true,
        counts: { done: 1000, failed: 0 },
      });
      expect(readdirSync(join(dir, "back", "d")).length).toBe(1000);
      expect(readFileSync(join(dir, "back", "d", "f0999.txt"), "utf8")).toBe("file 999 ".repeat(40));
      expect(
        readdirSync(join(dir, "back"), { recursive: true })
          .map(String)
          .filter((n) => n.endsWith(".partial")),
      ).toEqual([]);
      expect(await openUploads("tree/")).toEqual([]);
    } finally {
      await close();
    }
  }, 180_000);

  test("a copy from a slow store to another hands back a job and lands byte-exact", async () => {
    const env = { ...slowEnv(), ...otherStoreEnv() };
    const { client, close } = await connectBinary({ env, args: ["--allowed-dir", dir] });
    try {
      const theirs = `t-jobs-other-${Date.now().toString(36)}`;
      expect((await call(client, "create_bucket", { bucket_name: theirs, store: "other" })).isError).toBeFalsy();
      const copy = await call(client, "copy_object", {
        source_store: "default",
        source_bucket: bucket,
        source_key: "seed/big.bin",
        store: "other",
        bucket_name: theirs,
        object_key: "big.bin",
      });
      expect(copy.structuredContent!.job, textOf(copy)).toMatchObject({ state: "running", tool: "copy_object" });
      const done = await untilDone(client, copy.structuredContent!.job.id);
      expect(done.structuredContent).toMatchObject({ job: { state: "done" }, size: SIZE });
      const body = await (
        await otherClient().send(new GetObjectCommand({ Bucket: theirs, Key: "big.bin" }))
      ).Body!.transformToByteArray();
      expect(md5(body)).toBe(md5(data));
    } finally {
      await close();
    }
  }, 180_000);
});

/** A model whose host gives up after `timeoutMs` and that just calls again: the result once a call ends in time, and how many tries it took. */
async function callAgainUntilDone(
  client: Awaited<ReturnType<typeof connectBinary>>["client"],
  name: string,
  args: Record<string, unknown>,
  timeoutMs: number,
) {
  for (let tries = 1; tries <= 40; tries++) {
    try {
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs });
      return { result: result as Awaited<ReturnType<typeof call>>, tries };
    } catch (err) {
      if (!/timed out/i.test(String(err))) throw err;
    }
  }
  throw new Error(`${name} never finished within a try`);
}

describe("with the budget off, a model that calls again after each timeout", () => {
  test("upload_directory and download_prefix of 1,000 files finish, each try going on from where the last stopped; nothing left behind", async () => {
    const tree = join(dir, "again");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(tree, "d"), { recursive: true });
    for (let i = 0; i < 1000; i++)
      writeFileSync(join(tree, "d", `g${String(i).padStart(4, "0")}.txt`), `again ${i} `.repeat(40));
    const state = tempDir("jobs-state");
    const { client, close } = await connectBinary({
      env: { ...slowEnv(), STORE_CALL_BUDGET_SECONDS: "0", STORE_STATE_DIR: state },
      args: ["--allowed-dir", dir],
    });
    try {
      const up = await callAgainUntilDone(
        client,
        "upload_directory",
        { local_dir: "again", bucket_name: bucket, prefix: "again" },
        1_500,
      );
      expect(up.tries).toBeGreaterThan(1);
      expect(up.result.structuredContent, textOf(up.result)).toMatchObject({ complete: true, counts: { failed: 0 } });
      // The last try did what the others left; together they did every file once.
      expect(up.result.structuredContent!.counts.done + up.result.structuredContent!.counts.unchanged).toBe(1000);
      expect(up.result.structuredContent!.counts.unchanged).toBeGreaterThan(0);
      // Tries shorter than the upload's: 128 small downloads at once took the 1,000 files in one try of 1.5 s (4 tries of
      // 0.8 s; each try of 0.4 s ended before it wrote a file).
      const down = await callAgainUntilDone(
        client,
        "download_prefix",
        { bucket_name: bucket, prefix: "again/", local_dir: "again-back" },
        1_000,
      );
      expect(down.tries).toBeGreaterThan(1);
      expect(down.result.structuredContent, textOf(down.result)).toMatchObject({
        complete: true,
        counts: { failed: 0, conflicts: 0 },
      });
      expect(readdirSync(join(dir, "again-back", "d")).length).toBe(1000);
      for (const i of [0, 499, 999])
        expect(readFileSync(join(dir, "again-back", "d", `g${String(i).padStart(4, "0")}.txt`), "utf8")).toBe(
          `again ${i} `.repeat(40),
        );
      expect(
        readdirSync(join(dir, "again-back"), { recursive: true })
          .map(String)
          .filter((n) => n.endsWith(".partial")),
      ).toEqual([]);
      expect(await openUploads("again/")).toEqual([]);
    } finally {
      await close();
    }
  }, 240_000);

  test.each([
    ["", {}],
    [
      ", in the source's own parts held to its ETag (both stores Ceph)",
      { STORE_PROVIDER: "ceph", STORE_OTHER_PROVIDER: "ceph" },
    ],
  ] as const)(
    "a copy between stores from the slow store finishes, each try sending only the parts the destination lacks%s; nothing left behind",
    async (_, providers) => {
      const {
        CreateMultipartUploadCommand,
        UploadPartCommand,
        CompleteMultipartUploadCommand,
        GetObjectCommand: Get,
        ListMultipartUploadsCommand: ListUploads,
      } = await import("@aws-sdk/client-s3");
      // A multipart source (8 parts of 8 MiB, ~7 s through the slow link): its copy to a near store goes in parts, which a
      // cut keeps: our own 5 MiB ones, or the source's where both stores compose part ETags (then the copy has its ETag).
      const BIG = 64 * MiB;
      const source = randomBytes(BIG, 61);
      const created = await sdkClient().send(
        new CreateMultipartUploadCommand({ Bucket: bucket, Key: "again/big.bin" }),
      );
      const parts = [];
      for (let i = 0; i * 8 * MiB < BIG; i++) {
        const out = await sdkClient().send(
          new UploadPartCommand({
            Bucket: bucket,
            Key: "again/big.bin",
            UploadId: created.UploadId,
            PartNumber: i + 1,
            Body: source.subarray(i * 8 * MiB, Math.min(BIG, (i + 1) * 8 * MiB)),
          }),
        );
        parts.push({ PartNumber: i + 1, ETag: out.ETag });
      }
      await sdkClient().send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: "again/big.bin",
          UploadId: created.UploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
      const state = tempDir("jobs-state");
      const env = {
        ...slowEnv(),
        STORE_CALL_BUDGET_SECONDS: "0",
        STORE_STATE_DIR: state,
        ...otherStoreEnv(),
        ...providers,
      };
      const { client, close } = await connectBinary({ env, args: ["--allowed-dir", dir] });
      const other = otherClient();
      try {
        const theirs = `t-again-other-${Date.now().toString(36)}`;
        expect((await call(client, "create_bucket", { bucket_name: theirs, store: "other" })).isError).toBeFalsy();
        const copy = await callAgainUntilDone(
          client,
          "copy_object",
          {
            source_store: "default",
            source_bucket: bucket,
            source_key: "again/big.bin",
            store: "other",
            bucket_name: theirs,
            object_key: "big.bin",
          },
          // Parts of 8 MiB through the slow link need longer tries than 5 MiB ones to finish one each time.
          "STORE_OTHER_PROVIDER" in providers ? 6_000 : 3_000,
        );
        expect(copy.tries).toBeGreaterThan(1);
        expect(copy.result.structuredContent, textOf(copy.result)).toMatchObject({ size: BIG, multipart: true });
        // The source's parts kept: the copy's ETag is the source's, composed from the same parts' MD5s.
        const sourceEtag = (await sdkClient().send(new HeadObjectCommand({ Bucket: bucket, Key: "again/big.bin" })))
          .ETag;
        const copyEtag = (copy.result.structuredContent as { etag?: string }).etag;
        expect(copyEtag === sourceEtag).toBe("STORE_OTHER_PROVIDER" in providers);
        const body = await (await other.send(new Get({ Bucket: theirs, Key: "big.bin" }))).Body!.transformToByteArray();
        expect(md5(body)).toBe(md5(source));
        expect((await other.send(new ListUploads({ Bucket: theirs }))).Uploads ?? []).toEqual([]);
        expect(keptRecords(state).uploads).toEqual([]);
      } finally {
        await close();
      }
    },
    240_000,
  );
});
