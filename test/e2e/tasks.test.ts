/**
 * MCP Tasks on the wire, through the compiled binary over stdio against Ceph
 * (a slow link in front of it, so that transfers outlast a call): the
 * 2026-07-28 Tasks extension (a request that declares it in its client
 * capabilities gets `resultType: "task"`, then tasks/get and tasks/cancel)
 * and 2025-11-25's experimental tasks (`params.task`; tasks/get,
 * tasks/result, tasks/list, tasks/cancel), raw JSON-RPC so that every field
 * is seen as a client sees it, and the official Tasks client library
 * (@modelcontextprotocol/ext-tasks) on 2025-11-25. A call that asks for no task still gets
 * today's job handle, and a quick one answers as usual.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand, ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  toolDeclarationFromMcpTool,
} from "@modelcontextprotocol/ext-tasks/client";
import { startWanProxy, type WanProxy } from "../../scripts/bench/wan-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { requireBinary } from "../helpers/mcp.ts";
import { freshBucket, keysUnder, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
const TASKS = "io.modelcontextprotocol/tasks";
let wan: WanProxy;
let dir: string;
let bucket: string;
let data: Uint8Array;
const md5 = (b: Uint8Array) => createHash("md5").update(b).digest("hex");

beforeAll(async () => {
  // ~1.3 MB/s a connection: a 16 MiB upload takes several seconds.
  wan = await startWanProxy(s3().endpoint, { delayMs: 50, windowBytes: 64 * 1024 });
  dir = tempDir("tasks");
  data = randomBytes(16 * MiB, 11);
  writeFileSync(join(dir, "big.bin"), data);
  bucket = await freshBucket("tasks");
}, 60_000);
afterAll(() => wan?.stop());

type Message = { id?: number; result?: any; error?: { code: number; message: string }; method?: string };

/** The binary over stdio, spoken to in raw JSON-RPC lines: each request answered by its id. */
function rawClient(env: Record<string, string> = {}) {
  const proc = Bun.spawn([requireBinary(), "--allowed-dir", dir], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/root",
      ...s3Env(),
      STORE_ENDPOINT_URL: wan.endpoint,
      ...env,
    },
  });
  const waiting = new Map<number, (m: Message) => void>();
  (async () => {
    let buffer = "";
    for await (const chunk of proc.stdout) {
      buffer += new TextDecoder().decode(chunk);
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const message = JSON.parse(buffer.slice(0, nl)) as Message;
        buffer = buffer.slice(nl + 1);
        if (message.id !== undefined && !message.method) waiting.get(message.id)?.(message);
      }
    }
  })();
  let next = 1;
  const send = (method: string, params: Record<string, unknown> = {}): Promise<Message> => {
    const id = next++;
    const answered = new Promise<Message>((resolve) => waiting.set(id, resolve));
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return answered;
  };
  return {
    send,
    notify: (method: string) => proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`),
    close: async () => {
      proc.stdin.end();
      proc.kill();
      await proc.exited;
    },
  };
}

/** A 2026-07-28 request's _meta: its protocol, and the client's capabilities (with the Tasks extension, or without). */
const envelope = (tasks: boolean) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "tasks-test", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": tasks ? { extensions: { [TASKS]: {} } } : {},
});

const openUploads = async () =>
  (await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
const storedMd5 = async (key: string) =>
  md5(await (await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray());

describe("2026-07-28: the Tasks extension", () => {
  const modern = (client: ReturnType<typeof rawClient>, tasks: boolean) => ({
    call: (name: string, args: Record<string, unknown>) =>
      client.send("tools/call", { name, arguments: args, _meta: envelope(tasks) }),
    get: (taskId: string) => client.send("tasks/get", { taskId, _meta: envelope(tasks) }),
    cancel: (taskId: string) => client.send("tasks/cancel", { taskId, _meta: envelope(tasks) }),
  });

  test("server/discover declares the extension; a long upload answers with a task, tasks/get follows it to the upload's own result; the object is byte-exact", async () => {
    const client = rawClient();
    try {
      const discovered = await client.send("server/discover", { _meta: envelope(true) });
      expect(discovered.result.capabilities.extensions?.[TASKS]).toEqual({});
      expect(discovered.result.capabilities.tasks).toBeUndefined(); // 2025-11-25's declaration is not 2026's
      const wire = modern(client, true);
      const started = performance.now();
      const created = await wire.call("upload_file", {
        local_file_path: "big.bin",
        bucket_name: bucket,
        object_key: "task/big.bin",
      });
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(created.error).toBeUndefined();
      expect(created.result).toMatchObject({ resultType: "task", status: "working", ttlMs: 3_600_000 });
      expect(created.result.taskId).toMatch(/^job_[A-Za-z0-9_-]{20,}$/);
      expect(created.result.pollIntervalMs).toBeGreaterThan(0);
      expect(created.result.content).toBeUndefined(); // a task, not a job handle
      const { taskId } = created.result;
      let got = await wire.get(taskId);
      const messages: string[] = [];
      for (let i = 0; i < 120 && got.result?.status === "working"; i++) {
        if (got.result.statusMessage) messages.push(got.result.statusMessage);
        await Bun.sleep(250);
        got = await wire.get(taskId);
      }
      expect(got.result).toMatchObject({ taskId, status: "completed", resultType: "complete" });
      expect(got.result.result).toMatchObject({
        resultType: "complete",
        structuredContent: { bucket: bucket, key: "task/big.bin", size: data.length },
      });
      expect(got.result.result.isError).toBeFalsy();
      // Progress reached the task's status while it ran.
      expect(messages.some((m) => /of \d+ bytes/.test(m))).toBe(true);
      expect(await storedMd5("task/big.bin")).toBe(md5(data));
      expect(await openUploads()).toEqual([]);
    } finally {
      await client.close();
    }
  }, 120_000);

  test("tasks/cancel mid-upload: cancelled, nothing at the key, no multipart upload left; an unknown task id is an error naming it", async () => {
    const client = rawClient();
    try {
      const wire = modern(client, true);
      const created = await wire.call("upload_file", {
        local_file_path: "big.bin",
        bucket_name: bucket,
        object_key: "task/cancelled.bin",
      });
      expect(created.result.resultType).toBe("task");
      const cancelled = await wire.cancel(created.result.taskId);
      expect(cancelled.error).toBeUndefined();
      expect((await wire.get(created.result.taskId)).result).toMatchObject({ status: "cancelled" });
      expect(await keysUnder(bucket, "task/cancelled")).toEqual([]);
      expect(await openUploads()).toEqual([]);
      const unknown = await wire.get("job_nosuchtask0000000000000");
      expect(unknown.error?.code).toBe(-32602);
      expect(unknown.error?.message).toContain("job_nosuchtask0000000000000");
    } finally {
      await client.close();
    }
  }, 60_000);

  test("a quick call that declares tasks answers as usual; a long one that declares none gets today's job handle", async () => {
    const client = rawClient({ STORE_CALL_BUDGET_SECONDS: "1" });
    try {
      const quick = await modern(client, true).call("list_buckets", {});
      expect(quick.result.resultType).toBe("complete");
      expect(quick.result.structuredContent.buckets.map((b: { name: string }) => b.name)).toContain(bucket);
      const handle = await modern(client, false).call("upload_file", {
        local_file_path: "big.bin",
        bucket_name: bucket,
        object_key: "task/handle.bin",
      });
      expect(handle.result.resultType).toBe("complete");
      expect(handle.result.structuredContent.job).toMatchObject({ state: "running", tool: "upload_file" });
      await client.send("tools/call", {
        name: "cancel_job",
        arguments: { job_id: handle.result.structuredContent.job.id },
        _meta: envelope(false),
      });
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe("2025-11-25: experimental tasks", () => {
  /** A 2025-11-25 session; a client that runs tasks declares them (as VS Code does). */
  async function legacy(clientTasks = true) {
    const client = rawClient();
    const init = await client.send("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: clientTasks ? { tasks: { requests: { elicitation: { create: {} } } } } : {},
      clientInfo: { name: "tasks-test", version: "1" },
    });
    client.notify("notifications/initialized");
    return { client, init };
  }

  test("declared with the tools that take them; params.task answers at once with the task; tasks/get, tasks/list, tasks/result give the upload's result", async () => {
    const { client, init } = await legacy();
    try {
      expect(init.result.protocolVersion).toBe("2025-11-25");
      expect(init.result.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const tools = (await client.send("tools/list")).result.tools as { name: string; execution?: unknown }[];
      const execution = Object.fromEntries(tools.map((t) => [t.name, t.execution]));
      expect(execution.upload_file).toEqual({ taskSupport: "optional" });
      expect(execution.copy_prefix).toEqual({ taskSupport: "optional" });
      expect(execution.list_buckets).toBeUndefined();
      const created = await client.send("tools/call", {
        name: "upload_file",
        arguments: { local_file_path: "big.bin", bucket_name: bucket, object_key: "legacy/big.bin" },
        task: { ttl: 60_000 },
      });
      expect(created.error).toBeUndefined();
      expect(created.result.task).toMatchObject({ status: "working", ttl: 3_600_000 });
      const { taskId } = created.result.task;
      expect((await client.send("tasks/get", { taskId })).result).toMatchObject({ taskId, status: "working" });
      const listed = (await client.send("tasks/list")).result.tasks as { taskId: string }[];
      expect(listed.map((t) => t.taskId)).toContain(taskId);
      // tasks/result waits for the end and answers with the call's own result.
      const result = await client.send("tasks/result", { taskId });
      expect(result.result).toMatchObject({
        structuredContent: { bucket, key: "legacy/big.bin", size: data.length },
        _meta: { "io.modelcontextprotocol/related-task": { taskId } },
      });
      expect((await client.send("tasks/get", { taskId })).result.status).toBe("completed");
      expect(await storedMd5("legacy/big.bin")).toBe(md5(data));
      // Even a quick call that asks for a task gets one (it must), already completed or soon.
      const quick = await client.send("tools/call", { name: "list_buckets", arguments: {}, task: {} });
      expect(quick.result.task?.taskId).toMatch(/^job_/);
      expect(
        (await client.send("tasks/result", { taskId: quick.result.task.taskId })).result.structuredContent,
      ).toBeDefined();
    } finally {
      await client.close();
    }
  }, 120_000);

  test("a client that declares no tasks gets the tool list without them (what it would not read costs it nothing)", async () => {
    const { client, init } = await legacy(false);
    try {
      expect(init.result.capabilities.tasks).toBeDefined();
      const tools = (await client.send("tools/list")).result.tools as { name: string; execution?: unknown }[];
      expect(tools.filter((t) => t.execution !== undefined)).toEqual([]);
    } finally {
      await client.close();
    }
  });

  test("the official Tasks client (@modelcontextprotocol/ext-tasks over the v2 SDK's client) runs an upload as a task to its result", async () => {
    const client = new Client(
      { name: "ext-tasks-test", version: "1" },
      { versionNegotiation: { mode: "legacy" } as never, capabilities: { tasks: {} } as never },
    );
    await client.connect(
      new StdioClientTransport({
        command: requireBinary(),
        args: ["--allowed-dir", dir],
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...s3Env(), STORE_ENDPOINT_URL: wan.endpoint },
        stderr: "ignore",
      }),
    );
    const session = createTaskSessionFromClient(client, { endpointId: "tasks-test" });
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === "upload_file")!;
      const execution = await session.callTool(
        "upload_file",
        { local_file_path: "big.bin", bucket_name: bucket, object_key: "ext/big.bin" },
        { declaration: toolDeclarationFromMcpTool(tool), task: { preference: "prefer" } },
      );
      expect(execution.kind).toBe("task");
      const { outcome, lastTask } = await execution.settle();
      expect(outcome.status).toBe("completed");
      expect(lastTask?.taskId).toMatch(/^job_/);
      const result = resultFromTaskOutcome(outcome) as { structuredContent?: Record<string, unknown> };
      expect(result.structuredContent).toMatchObject({ bucket, key: "ext/big.bin", size: data.length });
      expect(await storedMd5("ext/big.bin")).toBe(md5(data));
    } finally {
      await session.close();
      await client.close();
    }
  }, 120_000);

  test("tasks/cancel mid-upload answers the cancelled task and leaves nothing behind", async () => {
    const { client } = await legacy();
    try {
      const created = await client.send("tools/call", {
        name: "upload_file",
        arguments: { local_file_path: "big.bin", bucket_name: bucket, object_key: "legacy/cancelled.bin" },
        task: {},
      });
      const cancelled = await client.send("tasks/cancel", { taskId: created.result.task.taskId });
      expect(cancelled.result).toMatchObject({ taskId: created.result.task.taskId, status: "cancelled" });
      expect(await keysUnder(bucket, "legacy/cancelled")).toEqual([]);
      expect(await openUploads()).toEqual([]);
    } finally {
      await client.close();
    }
  }, 60_000);
});
