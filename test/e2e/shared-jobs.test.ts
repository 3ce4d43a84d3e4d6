/**
 * Jobs shared by two replicas through a real redis-server (--state-url): a
 * long call handed back as a job on one replica is waited for, listed and
 * cancelled through the other; a replica killed mid-job leaves it reported
 * interrupted on the other, whose `next` (the same call again) resumes it and
 * finishes the file byte-exact; another caller sees none of it. The same
 * for a 2026-07-28 task: followed and cancelled through the other replica.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { connectHttp, type HttpBinary, rpc, startHttpBinary } from "../helpers/http.ts";
import { startNginx } from "../helpers/nginx.ts";
import { type Redis, startRedis } from "../helpers/redis.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
const ALICE = "shared-jobs-alice-token-0123456789";
const BOB = "shared-jobs-bob-token-0123456789ab";
const DATA = randomBytes(24 * MiB, 46);
let redis: Redis;
let proxy: FaultProxy;
let bucket: string;
let dir: string;
let replicas: HttpBinary[];

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] };
const text = (r: Result) => (r.content ?? []).map((c) => c.text ?? "").join("\n");

const start = () =>
  startHttpBinary({
    env: {
      ...s3Env(),
      STORE_ENDPOINT_URL: proxy.endpoint,
      STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}`,
      STORE_STATE_URL: redis.url,
      STORE_STATE_DIR: join(dir, ".state"),
      STORE_CALLER_RATE: "off",
      STORE_CALLER_IN_FLIGHT: "off",
    },
    args: ["--allowed-dir", dir, "--call-budget", "1"],
  });

beforeAll(async () => {
  redis = await startRedis();
  proxy = await startFaultProxy(s3().endpoint);
  bucket = await freshBucket("sharedjobs");
  dir = tempDir("shared-jobs");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: DATA }));
  replicas = await Promise.all([start(), start()]);
}, 60_000);
afterAll(async () => {
  for (const r of replicas ?? []) r.proc.kill("SIGKILL");
  await proxy?.stop();
  await redis?.stop();
});

/** A download handed back as a job on `replica` (or through a proxy's URL): its id. */
async function startJob(replica: HttpBinary | string, path: string): Promise<string> {
  const client = await connectHttp(typeof replica === "string" ? replica : replica.url, ALICE);
  try {
    const r = (await client.callTool({
      name: "get_object",
      arguments: { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: path },
    })) as Result;
    const id = (r.structuredContent?.job as { id?: string } | undefined)?.id;
    if (!id) throw new Error(`not handed back: ${text(r)}`);
    return id;
  } finally {
    await client.close();
  }
}

test("a job started through nginx is known to both replicas; its status, the wait for its result and list_jobs through the other; another caller sees nothing", async () => {
  proxy.set({ kind: "throttle", bytesPerSecond: 4 * MiB });
  const nginx = await startNginx(replicas.map((r) => r.port));
  const id = await startJob(nginx.url, "one/big.bin");
  await nginx.stop();
  // Whichever replica nginx gave it to, each answers for it.
  for (const replica of replicas) {
    const client = await connectHttp(replica.url, ALICE);
    const r = (await client.callTool({ name: "job_status", arguments: { job_id: id, wait_seconds: 0 } })) as Result;
    await client.close();
    expect(r.structuredContent?.job, text(r)).toMatchObject({ id, tool: "get_object" });
  }
  const other = await connectHttp(replicas[1]!.url, ALICE);
  const bob = await connectHttp(replicas[1]!.url, BOB);
  try {
    const listed = (await other.callTool({ name: "list_jobs", arguments: {} })) as Result;
    expect((listed.structuredContent!.jobs as { id: string; state: string }[]).find((j) => j.id === id)?.state).toBe(
      "running",
    );
    expect(((await bob.callTool({ name: "job_status", arguments: { job_id: id } })) as Result).isError).toBe(true);
    expect(((await bob.callTool({ name: "list_jobs", arguments: {} })) as Result).structuredContent!.jobs).toEqual([]);
    let status = (await other.callTool({ name: "job_status", arguments: { job_id: id, wait_seconds: 30 } })) as Result;
    for (let i = 0; i < 5 && (status.structuredContent!.job as { state: string }).state === "running"; i++)
      status = (await other.callTool({ name: "job_status", arguments: { job_id: id, wait_seconds: 30 } })) as Result;
    expect(status.structuredContent!.job).toMatchObject({ id, state: "done", tool: "get_object" });
    expect(status.structuredContent).toMatchObject({ local_path: join(dir, "one/big.bin") });
    expect(sha256(readFileSync(join(dir, "one/big.bin")))).toBe(sha256(DATA));
  } finally {
    proxy.set({ kind: "pass" });
    await Promise.all([other.close(), bob.close()]);
  }
}, 90_000);

test("cancel_job through the other replica reaches the one running the job within a second or two: cancelled, nothing left at the path", async () => {
  proxy.set({ kind: "throttle", bytesPerSecond: 1 * MiB });
  const id = await startJob(replicas[0]!, "two/big.bin");
  const other = await connectHttp(replicas[1]!.url, ALICE);
  try {
    const asked = performance.now();
    const r = (await other.callTool({ name: "cancel_job", arguments: { job_id: id } })) as Result;
    expect(performance.now() - asked).toBeLessThan(5_000);
    expect(JSON.stringify(r.structuredContent)).toContain('"cancelled"');
    expect(existsSync(join(dir, "two/big.bin"))).toBe(false);
  } finally {
    proxy.set({ kind: "pass" });
    await other.close();
  }
}, 60_000);

/** One 2026-07-28 request to `url` as `token`, declaring the Tasks extension: its JSON-RPC answer (JSON or one SSE event). */
async function modern(url: string, token: string, method: string, params: Record<string, unknown>) {
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "shared-tasks", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
  };
  const r = await rpc(
    url,
    { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta } },
    {
      authorization: `Bearer ${token}`,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      // The header that names what a request is about: the tool, or the task (the SDK checks it against the body).
      "mcp-name": String(params.name ?? params.taskId),
    },
  );
  const body = await r.text();
  const json = r.headers.get("content-type")?.includes("text/event-stream")
    ? body
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => JSON.parse(l.slice(5)))
        .find((m) => m.id === 1)
    : JSON.parse(body);
  return json as { result?: Record<string, any>; error?: { code: number; message: string } };
}

test("a task (2026-07-28) started on one replica is followed with tasks/get and cancelled with tasks/cancel through the other; another caller's tasks/get finds nothing", async () => {
  proxy.set({ kind: "throttle", bytesPerSecond: 2 * MiB });
  try {
    const created = await modern(replicas[0]!.url, ALICE, "tools/call", {
      name: "get_object",
      arguments: { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: "task/big.bin" },
    });
    expect(created.result, JSON.stringify(created)).toMatchObject({ resultType: "task", status: "working" });
    const taskId = created.result!.taskId as string;
    const seen = await modern(replicas[1]!.url, ALICE, "tasks/get", { taskId });
    expect(seen.result, JSON.stringify(seen)).toMatchObject({ taskId, status: "working" });
    const bob = await modern(replicas[1]!.url, BOB, "tasks/get", { taskId });
    expect(bob.error?.code).toBe(-32602);
    expect((await modern(replicas[1]!.url, ALICE, "tasks/cancel", { taskId })).error).toBeUndefined();
    const after = await modern(replicas[0]!.url, ALICE, "tasks/get", { taskId });
    expect(after.result).toMatchObject({ taskId, status: "cancelled" });
    expect(existsSync(join(dir, "task/big.bin"))).toBe(false);
  } finally {
    proxy.set({ kind: "pass" });
  }
}, 60_000);

test("the replica running a job is killed (kill -9): the other reports it interrupted, and the same call again through it finishes the file byte-exact", async () => {
  proxy.set({ kind: "throttle", bytesPerSecond: 1 * MiB });
  const id = await startJob(replicas[0]!, "three/big.bin");
  await Bun.sleep(1_500);
  replicas[0]!.proc.kill("SIGKILL");
  await replicas[0]!.proc.exited;
  const other = await connectHttp(replicas[1]!.url, ALICE);
  try {
    let status = (await other.callTool({ name: "job_status", arguments: { job_id: id, wait_seconds: 20 } })) as Result;
    // Each wait is the call budget here (1 s); a silent replica's job is seen interrupted within ~6 s of its last word.
    const killedAt = performance.now();
    while (
      (status.structuredContent!.job as { state: string }).state === "running" &&
      performance.now() - killedAt < 15_000
    )
      status = (await other.callTool({ name: "job_status", arguments: { job_id: id, wait_seconds: 20 } })) as Result;
    expect(status.structuredContent!.job).toMatchObject({ id, state: "interrupted" });
    expect(performance.now() - killedAt).toBeLessThan(10_000);
    expect(text(status)).toContain("JobInterrupted");
    expect(String(status.structuredContent!.next)).toContain("call get_object again with the same arguments");
    proxy.set({ kind: "pass" });
    let again = (await other.callTool({
      name: "get_object",
      arguments: { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: "three/big.bin" },
    })) as Result;
    // Past the 1 s call budget on a busy machine it is a job again: followed as a model would.
    for (
      let job = again.structuredContent?.job as { id: string; state: string } | undefined;
      job?.state === "running";
    ) {
      again = (await other.callTool({ name: "job_status", arguments: { job_id: job.id, wait_seconds: 20 } })) as Result;
      job = again.structuredContent?.job as typeof job;
    }
    expect(again.isError, text(again)).toBeFalsy();
    expect(sha256(readFileSync(join(dir, "three/big.bin")))).toBe(sha256(DATA));
  } finally {
    proxy.set({ kind: "pass" });
    await other.close();
  }
}, 90_000);

test("a replica stopped (SIGTERM) past its grace marks its jobs interrupted at once; the other reports it without waiting for the heartbeat", async () => {
  const stopping = await startHttpBinary({
    env: {
      ...s3Env(),
      STORE_ENDPOINT_URL: proxy.endpoint,
      STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}`,
      STORE_STATE_URL: redis.url,
      STORE_STATE_DIR: join(dir, ".state"),
      STORE_CALLER_RATE: "off",
      STORE_CALLER_IN_FLIGHT: "off",
      STORE_SHUTDOWN_GRACE_MS: "300",
    },
    args: ["--allowed-dir", dir, "--call-budget", "1"],
  });
  proxy.set({ kind: "throttle", bytesPerSecond: 1 * MiB });
  const other = await connectHttp(replicas[1]!.url, ALICE);
  try {
    const id = await startJob(stopping, "four/big.bin");
    expect(await stopping.stop()).toBe(0);
    const asked = performance.now();
    const status = (await other.callTool({ name: "job_status", arguments: { job_id: id, wait_seconds: 0 } })) as Result;
    expect(status.structuredContent!.job).toMatchObject({ id, state: "interrupted" });
    expect(text(status)).toContain("was stopped (a restart or a scale-down)");
    expect(performance.now() - asked).toBeLessThan(2_000);
  } finally {
    proxy.set({ kind: "pass" });
    await other.close();
  }
}, 60_000);

test("the state store down mid-job: calls without jobs are served, another replica's job answers StateStoreUnavailable; back up, the job's record is there again and ends done", async () => {
  const owner = await start();
  proxy.set({ kind: "throttle", bytesPerSecond: 2 * MiB });
  const other = await connectHttp(replicas[1]!.url, ALICE);
  try {
    const id = await startJob(owner, "five/big.bin");
    await redis.stop();
    const plain = (await other.callTool({ name: "list_buckets", arguments: {} })) as Result;
    expect(plain.isError, text(plain)).toBeFalsy();
    const down = (await other.callTool({ name: "job_status", arguments: { job_id: id, wait_seconds: 0 } })) as Result;
    expect(down.isError).toBe(true);
    expect(text(down)).toContain("StateStoreUnavailable");
    await redis.start();
    // (The proxy is left as it is: changing it would drop the download's connections.)
    // The owner's next write (each second while running, its end retried each second) brings the record back.
    let state = "";
    let said = "";
    for (let i = 0; i < 40 && !["done", "failed", "cancelled", "interrupted"].includes(state); i++) {
      await Bun.sleep(500);
      const r = (await other.callTool({ name: "job_status", arguments: { job_id: id, wait_seconds: 1 } })) as Result;
      state = (r.structuredContent?.job as { state?: string } | undefined)?.state ?? "";
      said = text(r);
    }
    expect(state, said).toBe("done");
    expect(sha256(readFileSync(join(dir, "five/big.bin")))).toBe(sha256(DATA));
  } finally {
    proxy.set({ kind: "pass" });
    await other.close();
    owner.proc.kill("SIGKILL");
  }
}, 90_000);

test("the state store's password is in no replica's log", () => {
  for (const replica of replicas) expect(replica.stderr()).not.toContain(redis.password);
  // The start-up line names the store, masked.
  expect(replicas[1]!.stderr()).toContain(`"stateUrl":"redis://`);
});
