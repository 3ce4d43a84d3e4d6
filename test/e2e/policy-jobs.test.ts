/**
 * Jobs follow the policy (hardening, fourth round), through the compiled
 * binary in remote mode with static tokens: after a caller's grant is
 * narrowed (SIGHUP), a query job's stored rows on the removed prefix are not
 * handed over (PolicyDenied, and the result is dropped); a running query and
 * a running bulk copy it would now refuse are stopped for good, and listed
 * (list_jobs, tasks/list) without their progress (fifth round); and with two
 * replicas sharing Redis, a reload on one stops the other's job.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { connectHttp, type HttpBinary, rpc, rpcAnswer, startHttpBinary } from "../helpers/http.ts";
import { call, textOf } from "../helpers/mcp.ts";
import { type Redis, startRedis } from "../helpers/redis.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const ALICE = "policy-jobs-alice-token-0123456789";
const MiB = 1024 * 1024;
const SLOW_SQL = "SELECT count(*) FROM objects, range(100000000000) t(i)";
let bucket: string;
let dir: string;
let proxy: FaultProxy;

/** Alice may read (and write) under `prefixes`. */
const policyFor = (prefixes: string[]) => `rules:
  - name: alice
    who: ["label:alice"]
    access: write
    buckets: ["${bucket}"]
    prefixes: [${prefixes.map((p) => `"${p}"`).join(", ")}]
    tools: ["*"]
    local_files: true
`;

beforeAll(async () => {
  bucket = await freshBucket("policyjobs");
  dir = tempDir("policy-jobs");
  for (const key of ["a/t.csv", "b/t.csv"])
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: "n,v\n1,x\n2,y\n" }));
  for (let i = 0; i < 8; i++)
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: `src/${i}.bin`, Body: randomBytes(MiB, i) }));
  for (let i = 0; i < 2; i++)
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: `a/${i}.bin`, Body: randomBytes(MiB, 20 + i) }));
  proxy = await startFaultProxy(s3().endpoint);
  // Each connection at 256 KiB/s: a download of eight 1 MiB objects takes seconds, whatever its concurrency.
  proxy.set({ kind: "throttle", bytesPerSecond: 256 * 1024 });
}, 60_000);
afterAll(() => proxy?.stop());

async function startServer(policyFile: string, env: Record<string, string> = {}): Promise<HttpBinary> {
  return startHttpBinary({
    env: {
      ...s3Env(),
      STORE_HTTP_TOKENS: `alice:${ALICE}`,
      STORE_CALLER_IN_FLIGHT: "off",
      STORE_CALLER_RATE: "off",
      ...env,
    },
    args: ["--policy", policyFile, "--call-budget", "1", "--allowed-dir", dir],
  });
}

/** Sends SIGHUP and waits for the reload's log line. */
async function reload(server: HttpBinary): Promise<void> {
  const before = server.stderr().split("reloaded (SIGHUP)").length;
  server.proc.kill("SIGHUP");
  for (let i = 0; i < 100 && server.stderr().split("reloaded (SIGHUP)").length === before; i++) await Bun.sleep(20);
}

async function jobOf(
  client: Awaited<ReturnType<typeof connectHttp>>,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const r = await call(client, name, args);
  const id = r.structuredContent?.job?.id;
  if (!id) throw new Error(`not handed back as a job: ${textOf(r)}`);
  return id;
}

type JobListed = { id: string; progress: Record<string, unknown> };

/** tasks/list (2025-11-25) as a raw HTTP client sends it. */
async function tasksList(url: string): Promise<{ taskId: string; statusMessage?: string }[]> {
  const res = await rpc(
    url,
    { jsonrpc: "2.0", id: 99, method: "tasks/list", params: {} },
    { authorization: `Bearer ${ALICE}`, "mcp-protocol-version": "2025-11-25" },
  );
  const answer = await rpcAnswer(res);
  if (!answer.result) throw new Error(`tasks/list: ${answer.text.slice(0, 300)}`);
  return answer.result.tasks;
}

describe("one replica", () => {
  test("a query job's rows on a prefix the policy no longer grants are not handed over, and are dropped", async () => {
    const policyFile = join(dir, "finished.yaml");
    writeFileSync(policyFile, policyFor(["a/", "b/"]));
    const server = await startServer(policyFile);
    const client = await connectHttp(server.url, ALICE);
    try {
      // 300 million hashes, a few seconds: past the 1 s budget, so a job.
      const id = await jobOf(client, "query_objects", {
        bucket_name: bucket,
        keys: ["b/t.csv"],
        sql: "SELECT count(*) AS n, sum(hash(i) % 7) AS h FROM objects, range(150000000) t(i)",
      });
      let status = await call(client, "job_status", { job_id: id });
      for (let i = 0; i < 60 && status.structuredContent?.job?.state === "running"; i++)
        status = await call(client, "job_status", { job_id: id });
      expect(status.structuredContent?.job?.state).toBe("done");
      // The rows are there under the policy that started it; now b/ is taken away.
      writeFileSync(policyFile, policyFor(["a/"]));
      await reload(server);
      expect(textOf(await call(client, "get_object", { bucket_name: bucket, object_key: "b/t.csv" }))).toContain(
        "PolicyDenied",
      );
      const refused = await call(client, "job_status", { job_id: id });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain("PolicyDenied");
      expect(textOf(refused)).not.toContain("300000000");
      // Dropped: the id is now unknown.
      expect(textOf(await call(client, "job_status", { job_id: id }))).toMatch(/NoSuchJob|unknown|not found/i);
    } finally {
      await client.close();
      await server.stop();
    }
  }, 60_000);

  test("a running query and a running bulk download that the new policy refuses are stopped for good", async () => {
    const policyFile = join(dir, "running.yaml");
    const local = join(dir, "downloaded");
    writeFileSync(policyFile, policyFor(["a/", "b/", "src/"]));
    const server = await startServer(policyFile, { STORE_ENDPOINT_URL: proxy.endpoint });
    const client = await connectHttp(server.url, ALICE);
    try {
      const query = await jobOf(client, "query_objects", { bucket_name: bucket, keys: ["b/t.csv"], sql: SLOW_SQL });
      // 1 MiB an object at 256 KiB/s: four seconds at least.
      const copy = await jobOf(client, "download_prefix", { bucket_name: bucket, prefix: "src/", local_dir: local });
      // Another job the new policy still grants (not a second query: a caller runs one query at a time).
      const untouched = await jobOf(client, "download_prefix", {
        bucket_name: bucket,
        prefix: "a/",
        local_dir: join(dir, "still-granted"),
      });
      writeFileSync(policyFile, policyFor(["a/"]));
      await reload(server);
      for (const id of [query, copy]) {
        let status = await call(client, "job_status", { job_id: id });
        for (let i = 0; i < 30 && status.structuredContent?.job?.state === "running"; i++)
          status = await call(client, "job_status", { job_id: id });
        expect(status.structuredContent?.job?.state, textOf(status)).toBe("failed");
        expect(textOf(status)).toContain("PolicyDenied");
        expect(textOf(status)).toContain("stopped when the policy changed");
      }
      expect(server.stderr()).toContain("2 running job(s) it refuses were stopped");
      // Listed by the policy in force: a stopped job's progress may name what the policy now withholds, so it is not shown.
      const hidden = { message: "not shown: the policy no longer grants this call" };
      const listed = (await call(client, "list_jobs", {})).structuredContent!.jobs as JobListed[];
      for (const id of [query, copy]) expect(listed.find((j) => j.id === id)?.progress).toEqual(hidden);
      expect(listed.find((j) => j.id === untouched)?.progress).not.toEqual(hidden);
      const tasks = (await tasksList(server.url)).filter((t) => t.taskId === query || t.taskId === copy);
      expect(tasks.length).toBe(2);
      for (const task of tasks) expect(task.statusMessage).toBe(hidden.message);
      // The download stopped short: not every object reached the folder.
      expect(existsSync(local) ? readdirSync(local).filter((n) => n.endsWith(".bin")).length : 0).toBeLessThan(8);
      // A job the new policy still grants goes on to its end.
      let status = await call(client, "job_status", { job_id: untouched });
      for (let i = 0; i < 60 && status.structuredContent?.job?.state === "running"; i++)
        status = await call(client, "job_status", { job_id: untouched });
      expect(status.structuredContent?.job?.state, textOf(status)).toBe("done");
    } finally {
      await client.close();
      await server.stop();
    }
  }, 90_000);
});

describe("two replicas sharing Redis", () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  test("a reload on one replica stops a job the new policy refuses on the other", async () => {
    const policyFile = join(dir, "shared.yaml");
    writeFileSync(policyFile, policyFor(["a/", "b/"]));
    const [one, two] = await Promise.all([
      startServer(policyFile, { STORE_STATE_URL: redis.url }),
      startServer(policyFile, { STORE_STATE_URL: redis.url }),
    ]);
    const client = await connectHttp(one!.url, ALICE);
    const other = await connectHttp(two!.url, ALICE);
    try {
      const id = await jobOf(client, "query_objects", { bucket_name: bucket, keys: ["b/t.csv"], sql: SLOW_SQL });
      writeFileSync(policyFile, policyFor(["a/"]));
      // Only the other replica is told; the one running the job hears it through Redis.
      await reload(two!);
      let status = await call(other, "job_status", { job_id: id });
      for (let i = 0; i < 30 && status.structuredContent?.job?.state === "running"; i++)
        status = await call(other, "job_status", { job_id: id });
      expect(status.isError).toBe(true);
      expect(textOf(status)).toContain("PolicyDenied");
      expect(one!.stderr()).toContain("a policy change on another replica");
      expect(one!.stderr()).toContain("1 running job(s) it refuses were stopped");
    } finally {
      await client.close();
      await other.close();
      await one!.stop();
      await two!.stop();
    }
  }, 60_000);
});
