/**
 * The query engine runs in worker processes, not in the server (hardening,
 * fourth round), through the compiled binary: one caller's slow query does
 * not stop another caller's reads or queries, and their own second query is
 * QueryBusy at once, naming the first (fifth round); their query time is
 * budgeted; a caller's running jobs count against its in-flight limit and
 * are capped;
 * SQL that builds huge strings ends QueryTooLarge while the server's
 * resident size stays flat; a worker has no credentials in its environment;
 * a worker killed mid-query (SIGSEGV, SIGKILL) costs that query a clear
 * error and nothing else; query directories a killed server left are swept.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { tempDir } from "../helpers/files.ts";
import { rpc, startHttpBinary } from "../helpers/http.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

const ALICE = "alice-query-token-0123456789ab";
const BOB = "bob-query-token-0123456789abcd";
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const SLOW_SQL = "SELECT count(*) FROM objects, range(100000000000) t(i)";
let bucket: string;

beforeAll(async () => {
  requireBinary();
  bucket = await freshBucket("qiso");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "tiny.csv", Body: "a,b\n1,hello\n2,world\n" }));
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "nine.txt", Body: "nine byte" }));
}, 60_000);

/** A tools/call's JSON-RPC answer over HTTP (the SSE or JSON body), or "timeout" after `ms`. */
async function callHttp(
  url: string,
  token: string,
  id: number,
  name: string,
  args: Record<string, unknown>,
  ms = 60_000,
): Promise<{ status: number; result?: any; text: string } | "timeout"> {
  const answer = rpc(
    url,
    { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
    auth(token),
  ).then(async (res) => {
    const body = await res.text();
    const json = body.includes("data: ")
      ? body
          .split("\n")
          .filter((l) => l.startsWith("data: "))
          .map((l) => JSON.parse(l.slice(6)))
          .find((m) => m.id === id)
      : body
        ? JSON.parse(body)
        : undefined;
    return { status: res.status, result: json?.result, text: body };
  });
  return Promise.race([answer, Bun.sleep(ms).then(() => "timeout" as const)]);
}

/** The server's children that are query workers. */
function workersOf(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  return children.filter((c) => {
    try {
      return readFileSync(`/proc/${c}/cmdline`, "utf8").includes("__query-worker");
    } catch {
      return false;
    }
  });
}

const statusKb = (pid: number, field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);

describe("queries do not hold what other calls need", () => {
  test("one caller cannot hold every query slot: their second query is refused naming the first, another caller's query runs, and reads answer at once", async () => {
    const server = await startHttpBinary({
      env: { ...s3Env(), STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}`, STORE_CALL_BUDGET_SECONDS: "1" },
    });
    try {
      const handed = await callHttp(server.url, ALICE, 1, "query_objects", {
        bucket_name: bucket,
        keys: ["tiny.csv"],
        sql: SLOW_SQL,
      });
      expect(handed).not.toBe("timeout");
      const job = (handed as { result: any }).result?.structuredContent?.job;
      expect(job?.state, (handed as { text: string }).text).toBe("running");
      // Her second query is the one refused, naming the one she runs and how to stop it.
      const second = await callHttp(server.url, ALICE, 2, "query_objects", {
        bucket_name: bucket,
        keys: ["tiny.csv"],
        sql: SLOW_SQL,
      });
      const refused = (second as { result: any }).result;
      expect(refused.isError).toBe(true);
      expect(refused.content[0].text).toContain("QueryBusy");
      expect(refused.content[0].text).toContain(job.id);
      expect(refused.content[0].text).toContain("cancel_job");
      const started = performance.now();
      const read = await callHttp(
        server.url,
        BOB,
        3,
        "get_object",
        { bucket_name: bucket, object_key: "nine.txt" },
        10_000,
      );
      expect(read).not.toBe("timeout");
      expect(JSON.stringify((read as { result: any }).result)).toContain("nine byte");
      expect(performance.now() - started).toBeLessThan(5_000);
      // Another caller's query runs in the slot she could not take.
      const bobs = await callHttp(server.url, BOB, 4, "query_objects", {
        bucket_name: bucket,
        keys: ["tiny.csv"],
        sql: "SELECT count(*) AS n FROM objects",
      });
      expect((bobs as { result: any }).result.structuredContent?.rows, (bobs as { text: string }).text).toEqual([[2]]);
      const cancelled = await callHttp(server.url, ALICE, 10, "cancel_job", { job_id: job.id });
      expect((cancelled as { result: any }).result.structuredContent.job.state).toBe("cancelled");
      // Her slot is free again.
      const again = await callHttp(server.url, ALICE, 20, "query_objects", {
        bucket_name: bucket,
        keys: ["tiny.csv"],
        sql: "SELECT count(*) AS n FROM objects",
      });
      expect((again as { result: any }).result.structuredContent.rows).toEqual([[2]]);
    } finally {
      await server.stop();
    }
  }, 90_000);

  test("a caller's queries count against their query time (STORE_CALLER_QUERY_SECONDS): renewing a slot has a cost", async () => {
    const server = await startHttpBinary({
      env: {
        ...s3Env(),
        STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}`,
        STORE_CALL_BUDGET_SECONDS: "1",
        STORE_CALLER_QUERY_SECONDS: "3",
      },
    });
    try {
      const handed = await callHttp(server.url, ALICE, 1, "query_objects", {
        bucket_name: bucket,
        keys: ["tiny.csv"],
        sql: SLOW_SQL,
      });
      const job = (handed as { result: any }).result.structuredContent.job;
      expect(job.state).toBe("running");
      await Bun.sleep(3_500);
      await callHttp(server.url, ALICE, 2, "cancel_job", { job_id: job.id });
      const spent = await callHttp(server.url, ALICE, 3, "query_objects", {
        bucket_name: bucket,
        keys: ["tiny.csv"],
        sql: "SELECT count(*) AS n FROM objects",
      });
      const refused = (spent as { result: any }).result;
      expect(refused.isError).toBe(true);
      expect(refused.content[0].text).toContain("QueryBudgetSpent");
      expect(refused.content[0].text).toMatch(/retry in about \d+ s/);
      // Another caller's budget is their own.
      const bobs = await callHttp(server.url, BOB, 4, "query_objects", {
        bucket_name: bucket,
        keys: ["tiny.csv"],
        sql: "SELECT count(*) AS n FROM objects",
      });
      expect((bobs as { result: any }).result.structuredContent?.rows).toEqual([[2]]);
    } finally {
      await server.stop();
    }
  }, 90_000);

  test("a caller's running jobs count against its in-flight limit", async () => {
    const server = await startHttpBinary({
      env: {
        ...s3Env(),
        STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}`,
        STORE_CALL_BUDGET_SECONDS: "1",
        STORE_CALLER_IN_FLIGHT: "1",
      },
    });
    try {
      // 300 million hashes: past the 1 s budget (a job), done within seconds.
      const handed = await callHttp(server.url, ALICE, 1, "query_objects", {
        bucket_name: bucket,
        keys: ["tiny.csv"],
        sql: "SELECT count(*) AS n, sum(hash(i) % 7) AS h FROM objects, range(150000000) t(i)",
      });
      const job = (handed as { result: any }).result.structuredContent.job;
      expect(job.state).toBe("running");
      // The job holds the caller's one slot while it runs: her next request is refused, another caller's is not.
      const head = {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "head_object", arguments: { bucket_name: bucket, object_key: "nine.txt" } },
      };
      const refused = await rpc(server.url, head, auth(ALICE));
      expect(refused.status).toBe(429);
      expect((await rpc(server.url, head, auth(BOB))).status).toBe(200);
      // Once the job ends its slot is given back.
      let status = 429;
      for (let i = 0; i < 120 && status === 429; i++) {
        await Bun.sleep(250);
        status = (await rpc(server.url, head, auth(ALICE))).status;
      }
      expect(status).toBe(200);
    } finally {
      await server.stop();
    }
  }, 90_000);

  test("running jobs per caller are capped (STORE_MAX_RUNNING_JOBS): the next long call is refused with what to do", async () => {
    const { client, close } = await connectBinary({
      env: { ...s3Env(), STORE_CALL_BUDGET_SECONDS: "1", STORE_MAX_RUNNING_JOBS: "1" },
    });
    try {
      const first = await call(client, "query_objects", { bucket_name: bucket, keys: ["tiny.csv"], sql: SLOW_SQL });
      const job = first.structuredContent!.job;
      expect(job?.state, textOf(first)).toBe("running");
      const second = await call(client, "query_objects", { bucket_name: bucket, keys: ["tiny.csv"], sql: SLOW_SQL });
      expect(second.isError).toBe(true);
      expect(textOf(second)).toContain("JobLimit");
      expect(textOf(second)).toContain(job.id);
      // Quick calls are not jobs: still served.
      expect((await call(client, "head_object", { bucket_name: bucket, object_key: "nine.txt" })).isError).toBeFalsy();
      await call(client, "cancel_job", { job_id: job.id });
      const third = await call(client, "query_objects", {
        bucket_name: bucket,
        keys: ["tiny.csv"],
        sql: "SELECT count(*) AS n FROM objects",
      });
      expect(third.structuredContent!.rows).toEqual([[2]]);
    } finally {
      await close();
    }
  }, 60_000);
});

describe("the engine's memory is not the server's", () => {
  let client: Awaited<ReturnType<typeof connectBinary>>;
  let tmp: string;
  beforeAll(async () => {
    tmp = tempDir("qiso-tmp");
    client = await connectBinary({
      env: {
        ...s3Env(),
        TMPDIR: tmp,
        STORE_CALL_BUDGET_SECONDS: "0",
        STORE_SECRET_ACCESS_KEY_EXTRA: "x",
        AWS_SECRET_ACCESS_KEY: "should-not-reach-the-worker",
        MY_API_TOKEN: "neither",
      },
    });
  });
  afterAll(() => client?.close());
  const query = (sql: string, extra: Record<string, unknown> = {}) =>
    call(client.client, "query_objects", { bucket_name: bucket, keys: ["tiny.csv"], sql, ...extra });

  test("strings of 300 MB built by SQL end QueryTooLarge (or cut), and the server's resident size stays flat", async () => {
    const before = statusKb(client.pid, "VmRSS");
    for (const sql of [
      "SELECT repeat('x', 300000000) FROM objects",
      "SELECT length(repeat('x', 300000000)) FROM objects",
      "SELECT string_agg(repeat(b, 100000000), ',') FROM objects",
    ]) {
      const r = await query(sql);
      expect(r.isError, `${sql}: ${textOf(r)}`).toBe(true);
      expect(textOf(r)).toContain("QueryTooLarge");
      // Stopped by the worker's cap, or by the engine's own limit first: either way the same code, in MB.
      expect(textOf(r)).toMatch(/\d+ MB/);
    }
    // The server never grew by the strings: its peak (VmHWM) is within a small margin of where it was.
    const peak = statusKb(client.pid, "VmHWM");
    expect(peak * 1024).toBeLessThan(200 * 1024 * 1024);
    expect((statusKb(client.pid, "VmRSS") - before) * 1024).toBeLessThan(40 * 1024 * 1024);
    const after = await query("SELECT count(*) AS n FROM objects");
    expect(after.structuredContent!.rows).toEqual([[2]]);
  }, 60_000);

  test("a long cell is cut inside the engine: 10 MB text comes back as 2,000 characters", async () => {
    const r = await query("SELECT a, repeat(b, 2000000) AS long FROM objects");
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.cells_cut).toBe(2);
    expect(r.structuredContent!.rows[0][1].length).toBe(2001);
    expect(r.structuredContent!.columns).toEqual([
      { name: "a", type: "BIGINT" },
      { name: "long", type: "VARCHAR" },
    ]);
  }, 60_000);

  test("a worker's environment holds no credentials", async () => {
    const running = query(SLOW_SQL);
    let workers: number[] = [];
    for (let i = 0; i < 100 && workers.length === 0; i++) {
      await Bun.sleep(50);
      workers = workersOf(client.pid);
    }
    expect(workers.length).toBeGreaterThan(0);
    for (const w of workers) {
      const env = readFileSync(`/proc/${w}/environ`, "utf8").split("\0").filter(Boolean);
      const names = env.map((e) => e.split("=")[0]!);
      expect(names.filter((n) => /^(STORE_|AWS_)|TOKEN|SECRET|PASSWORD|KEY/i.test(n))).toEqual([]);
      expect(env.join("\n")).not.toContain(s3Env().STORE_SECRET_ACCESS_KEY!);
    }
    for (const w of workers) process.kill(w, "SIGKILL");
    const r = await running;
    expect(r.isError).toBe(true);
  }, 60_000);

  for (const signal of ["SIGSEGV", "SIGKILL"] as const) {
    test(`a worker killed by ${signal} mid-query costs that query a clear error; the server serves on`, async () => {
      const running = query(SLOW_SQL);
      let workers: number[] = [];
      for (let i = 0; i < 100 && workers.length === 0; i++) {
        await Bun.sleep(50);
        workers = workersOf(client.pid);
      }
      await Bun.sleep(300);
      for (const w of workersOf(client.pid)) process.kill(w, signal);
      const r = await running;
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("QueryEngineCrashed");
      expect(textOf(r)).toContain(signal);
      const after = await query("SELECT count(*) AS n FROM objects");
      expect(after.structuredContent!.rows, textOf(after)).toEqual([[2]]);
      expect(
        (await call(client.client, "head_object", { bucket_name: bucket, object_key: "nine.txt" })).isError,
      ).toBeFalsy();
      expect(readdirSync(tmp).filter((n) => n.startsWith("store-mcp-query-"))).toEqual([]);
    }, 60_000);
  }
});

/** A temp directory holding a query directory of a process that has ended, and one of a running one (this test's). */
function leftovers(name: string): { tmp: string; left: string; live: string } {
  const tmp = tempDir(name);
  const dead = Bun.spawnSync(["true"]).pid;
  const left = join(tmp, `store-mcp-query-${dead}-AbC123`);
  const live = join(tmp, `store-mcp-query-${process.pid}-XyZ789`);
  for (const d of [left, live]) mkdirSync(join(d, "data"), { recursive: true });
  return { tmp, left, live };
}

for (const when of ["at start", "by a first query"] as const) {
  test(`query directories a killed server left behind are swept ${when}; a running server's are not`, async () => {
    const { tmp, left, live } = leftovers("qiso-sweep");
    const { client, close } = await connectBinary({ env: { ...s3Env(), TMPDIR: tmp } });
    try {
      if (when === "by a first query") {
        const r = await call(client, "query_objects", {
          bucket_name: bucket,
          keys: ["tiny.csv"],
          sql: "SELECT count(*) FROM objects",
        });
        expect(r.isError, textOf(r)).toBeFalsy();
      } else {
        for (let i = 0; i < 100 && existsSync(left); i++) await Bun.sleep(50);
      }
      expect(existsSync(left)).toBe(false);
      expect(existsSync(live)).toBe(true);
    } finally {
      await close();
    }
  }, 60_000);
}

test("a server in another PID namespace sharing the temp directory keeps a running server's query directory (judged by its lock, not its pid)", async () => {
  const tmp = tempDir("qiso-pidns");
  const env = { ...s3Env(), TMPDIR: tmp, STORE_CALL_BUDGET_SECONDS: "1" };
  const a = await connectBinary({ env });
  let b: ReturnType<typeof Bun.spawn> | undefined;
  try {
    const handed = await call(a.client, "query_objects", { bucket_name: bucket, keys: ["tiny.csv"], sql: SLOW_SQL });
    const job = handed.structuredContent?.job as { id: string; state: string } | undefined;
    expect(job?.state, textOf(handed)).toBe("running");
    const live = readdirSync(tmp).filter((n) => n.startsWith("store-mcp-query-"));
    expect(live.length).toBe(1);
    // Another server in a PID namespace of its own, as in another container: its start sweeps after 2 s.
    b = Bun.spawn(["unshare", "--pid", "--fork", "--mount", "--mount-proc", requireBinary()], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...env },
      stdin: "pipe",
      stdout: "ignore",
      stderr: "pipe",
    });
    await Bun.sleep(3_500);
    expect(b.exitCode).toBeNull();
    expect(readdirSync(tmp).filter((n) => n.startsWith("store-mcp-query-"))).toEqual(live);
    b.kill("SIGKILL");
    // Killed mid-query, the server's lock goes with it: the next server's start sweeps what it left.
    process.kill(a.pid, "SIGKILL");
    b = Bun.spawn(["unshare", "--pid", "--fork", "--mount", "--mount-proc", requireBinary()], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...env },
      stdin: "pipe",
      stdout: "ignore",
      stderr: "pipe",
    });
    for (let i = 0; i < 100 && existsSync(join(tmp, live[0]!)); i++) await Bun.sleep(100);
    expect(existsSync(join(tmp, live[0]!))).toBe(false);
    // Its worker did not go on with the query for nobody.
    const orphans = () =>
      readdirSync("/proc")
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            return readFileSync(`/proc/${p}/environ`, "utf8").includes(`TMPDIR=${tmp}`);
          } catch {
            return false;
          }
        });
    for (let i = 0; i < 20 && orphans().length > 0; i++) await Bun.sleep(100);
    expect(orphans().filter((p) => readFileSync(`/proc/${p}/cmdline`, "utf8").includes("__query-worker"))).toEqual([]);
  } finally {
    b?.kill("SIGKILL");
    await a.close().catch(() => {});
  }
}, 60_000);
