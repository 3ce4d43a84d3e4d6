/**
 * 2025-11-25 tasks over Streamable HTTP (remote mode), through the compiled
 * binary behind a slow link: a client that declares tasks in its initialize
 * gets a session id that says so, sealed to it, and with it tools/list marks
 * the tools that take tasks (`execution.taskSupport`) on whichever replica
 * answers; the official Tasks client then runs a 32 MiB download as a task
 * and cancels it, leaving no file (the same download called again meanwhile
 * is refused, naming the task). A client that declares none gets no marks.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  toolDeclarationFromMcpTool,
} from "@modelcontextprotocol/ext-tasks/client";
import { startWanProxy, type WanProxy } from "../../scripts/bench/wan-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { type HttpBinary, rpc, rpcAnswer, startHttpBinary } from "../helpers/http.ts";
import { type Redis, startRedis } from "../helpers/redis.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";
import { waitFor } from "../helpers/wait.ts";

const MiB = 1024 * 1024;
const TOKEN = "tasks-over-http-token-0123456789";
let wan: WanProxy;
let dir: string;
let bucket: string;

beforeAll(async () => {
  // ~1.3 MB/s a connection: a 32 MiB download takes a while, whatever its parallel ranges.
  wan = await startWanProxy(s3().endpoint, { delayMs: 50, windowBytes: 64 * 1024 });
  dir = tempDir("tasks-http");
  bucket = await freshBucket("taskshttp");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: randomBytes(32 * MiB, 5) }));
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "small.txt", Body: "small" }));
}, 60_000);
afterAll(() => wan?.stop());

const start = (env: Record<string, string> = {}) =>
  startHttpBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: wan.endpoint, STORE_HTTP_TOKENS: `ci:${TOKEN}`, ...env },
    args: ["--allowed-dir", dir],
  });

async function connect(url: string, tasks: boolean): Promise<Client> {
  const client = new Client(
    { name: "tasks-http-test", version: "1" },
    { versionNegotiation: { mode: "legacy" } as never, capabilities: (tasks ? { tasks: {} } : {}) as never },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  return client;
}

const marks = async (client: Client) =>
  Object.fromEntries(
    (await client.listTools()).tools.map((t) => [t.name, (t as { execution?: { taskSupport?: string } }).execution]),
  );

describe("one server", () => {
  let server: HttpBinary;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server?.stop());

  test("a client that declared tasks gets the long tools marked; one that did not gets no marks", async () => {
    const plain = await connect(server.url, false);
    const tasking = await connect(server.url, true);
    try {
      expect(Object.values(await marks(plain)).filter(Boolean)).toEqual([]);
      const marked = await marks(tasking);
      expect(marked.get_object).toEqual({ taskSupport: "optional" });
      expect(marked.download_prefix).toEqual({ taskSupport: "optional" });
      expect(marked.head_object).toBeUndefined();
    } finally {
      await plain.close();
      await tasking.close();
    }
  }, 30_000);

  test("the official Tasks client runs a 32 MiB download as a task and cancels it: no file, no partial", async () => {
    const client = await connect(server.url, true);
    const session = createTaskSessionFromClient(client as never, { endpointId: "tasks-http" });
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === "get_object")!;
      const execution = await session.callTool(
        "get_object",
        { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: join(dir, "big.bin") },
        { declaration: toolDeclarationFromMcpTool(tool as never), task: { preference: "prefer" } },
      );
      expect(execution.kind).toBe("task");
      // The task's call runs after its handle is answered; once its file is in the making it holds the destination
      // (under load a second call could otherwise come first, and be the one that downloads).
      await waitFor("the task's partial file", () => readdirSync(dir).some((n) => n.startsWith(".big.bin.")));
      // The same download called again while the task runs: refused at once, naming the task to wait for.
      const again = await client.callTool({
        name: "get_object",
        arguments: { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: join(dir, "big.bin") },
      });
      expect(again.isError).toBe(true);
      const said = (again.content as { text: string }[])[0]!.text;
      expect(said).toContain("DestinationBusy");
      expect(said).toContain(execution.handle!.taskId);
      await execution.cancel();
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("cancelled");
      expect(existsSync(join(dir, "big.bin"))).toBe(false);
      expect(readdirSync(dir).filter((n) => n.includes("big.bin"))).toEqual([]);
      // A quick call asked as a task answers all the same, with its result.
      const small = await session.callTool(
        "get_object",
        { bucket_name: bucket, object_key: "small.txt", mode: "download", local_path: join(dir, "small.txt") },
        { declaration: toolDeclarationFromMcpTool(tool as never), task: { preference: "prefer" } },
      );
      const settled = await small.settle();
      const result = resultFromTaskOutcome(settled.outcome) as { structuredContent?: Record<string, unknown> };
      expect(result.structuredContent).toMatchObject({ size: 5 });
    } finally {
      await session.close();
      await client.close();
    }
  }, 90_000);
});

describe("two replicas sharing Redis", () => {
  let redis: Redis;
  let a: HttpBinary;
  let b: HttpBinary;
  beforeAll(async () => {
    redis = await startRedis();
    a = await start({ STORE_STATE_URL: redis.url });
    b = await start({ STORE_STATE_URL: redis.url });
  }, 60_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await redis?.stop();
  });

  test("the session id one replica issued marks the tools on the other", async () => {
    const client = await connect(a.url, true);
    try {
      // The same session id, sent to the other replica.
      const sessionId = (client as unknown as { transport: { sessionId?: string } }).transport.sessionId;
      expect(sessionId).toBeString();
      const session = { "mcp-session-id": sessionId!, "mcp-protocol-version": "2025-11-25" };
      const list = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list", params: {} });
      const answer = await rpcAnswer(await rpc(b.url, list(2), { ...session, authorization: `Bearer ${TOKEN}` }));
      const tools = answer.result.tools as { name: string; execution?: unknown }[];
      expect(tools.find((t) => t.name === "get_object")?.execution).toEqual({ taskSupport: "optional" });
      // Another caller presenting it declares nothing.
      const forged = await rpc(b.url, list(3), session);
      expect(forged.status).toBe(401);
    } finally {
      await client.close();
    }
  }, 60_000);
});
