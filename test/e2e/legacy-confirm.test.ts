/**
 * Confirmations over 2025 Streamable HTTP, served statelessly by two
 * replicas that share a real redis-server (--state-url), behind a real
 * nginx (round robin): a client that declared elicitation is asked on its
 * call's own stream, and its answer counts wherever it lands.
 * - Raw JSON-RPC, the two legs on different replicas on purpose: the question
 *   on one, the answer POSTed to the other (relayed through Redis); another
 *   caller's answer to the same question is not taken, and another caller
 *   presenting the session id gets no question.
 * - The TS v2 client (legacy handshake) and the Python SDK 2.3 ClientSession
 *   through nginx: declined keeps every object, accepted deletes.
 * - Without a state store, one replica asks and takes its own answers.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ANSWERS, type Answer } from "../helpers/elicitation.ts";
import { type HttpBinary, rpc, startHttpBinary } from "../helpers/http.ts";
import { type Nginx, startNginx } from "../helpers/nginx.ts";
import { type Redis, startRedis } from "../helpers/redis.ts";
import { freshBucket, keysUnder, s3Env, sdkClient } from "../helpers/s3.ts";

const PYTHON = resolve(import.meta.dir, "../../.tools/py-mcp/bin/python");
const DRIVER = resolve(import.meta.dir, "../clients/python_confirm.py");
const ALICE = "legacy-confirm-alice-token-0123456";
const BOB = "legacy-confirm-bob-token-0123456789";
let redis: Redis;
let nginx: Nginx;
let bucket: string;
let replicas: HttpBinary[];
let alone: HttpBinary;

const start = (shared: boolean) =>
  startHttpBinary({
    env: {
      ...s3Env(),
      STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}`,
      ...(shared ? { STORE_STATE_URL: redis.url } : {}),
      STORE_CALLER_RATE: "off",
      STORE_CALLER_IN_FLIGHT: "off",
    },
    args: ["--allow-delete"],
  });

beforeAll(async () => {
  if (!existsSync(PYTHON))
    throw new Error(`${PYTHON} is missing: bash scripts/provision.sh test makes the venv with the Python SDK`);
  redis = await startRedis();
  bucket = await freshBucket("legacyconfirm");
  replicas = await Promise.all([start(true), start(true)]);
  alone = await start(false);
  nginx = await startNginx(replicas.map((r) => r.port));
}, 60_000);
afterAll(async () => {
  await nginx?.stop();
  for (const r of [...(replicas ?? []), alone]) r?.proc.kill("SIGKILL");
  await redis?.stop();
});

async function put(prefix: string, n: number): Promise<string[]> {
  const keys = Array.from({ length: n }, (_, i) => `${prefix}${i}.txt`);
  await Promise.all(keys.map((Key) => sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body: Key }))));
  return keys;
}

type Message = { id?: string | number; method?: string; params?: Record<string, unknown>; result?: any };

/** The JSON-RPC messages of an SSE answer, as they arrive. */
async function* sseMessages(res: Response): AsyncGenerator<Message> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    for (let cut = buffered.indexOf("\n\n"); cut >= 0; cut = buffered.indexOf("\n\n")) {
      const data = buffered
        .slice(0, cut)
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
        .join("");
      buffered = buffered.slice(cut + 2);
      if (data) yield JSON.parse(data);
    }
  }
}

/** A raw 2025 initialize that declares elicitation: the session id the replica gave. */
async function initialize(url: string, token: string): Promise<string> {
  const res = await rpc(
    url,
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: { elicitation: { form: {} } },
        clientInfo: { name: "raw", version: "1" },
      },
    },
    { authorization: `Bearer ${token}` },
  );
  expect(res.status).toBe(200);
  await res.text();
  const session = res.headers.get("mcp-session-id");
  expect(session).toBeTruthy();
  return session!;
}

const headers = (token: string, session: string) => ({
  authorization: `Bearer ${token}`,
  "mcp-session-id": session,
  "mcp-protocol-version": "2025-11-25",
});
const deleteCall = (prefix: string) => ({
  jsonrpc: "2.0",
  id: 7,
  method: "tools/call",
  params: { name: "delete_objects", arguments: { bucket_name: bucket, prefix, confirm: true } },
});

test("raw: asked on one replica, answered on the other (relayed through Redis); another caller's answer is not taken", async () => {
  const [a, b] = replicas;
  for (const [answer, expected] of [
    ["decline", "declined"],
    ["accept", "accepted"],
  ] as const) {
    const prefix = `raw-${answer}/`;
    const keys = await put(prefix, 3);
    const session = await initialize(a!.url, ALICE);
    const call = await rpc(a!.url, deleteCall(prefix), headers(ALICE, session));
    expect(call.headers.get("content-type")).toContain("text/event-stream");
    const messages = sseMessages(call);
    const question = (await messages.next()).value as Message;
    expect(question).toMatchObject({ method: "elicitation/create", params: { mode: "form" } });
    expect(String(question.params!.message)).toContain("Delete 3 object(s)");
    // Bob answers Alice's question first (through the other replica): it is not his to answer.
    const wrong = await rpc(
      b!.url,
      { jsonrpc: "2.0", id: question.id, result: ANSWERS[answer === "accept" ? "decline" : "accept"] },
      { authorization: `Bearer ${BOB}` },
    );
    expect(wrong.status).toBe(202);
    await Bun.sleep(300);
    const right = await rpc(
      b!.url,
      { jsonrpc: "2.0", id: question.id, result: ANSWERS[answer as Answer] },
      headers(ALICE, session),
    );
    expect(right.status).toBe(202);
    const result = (await messages.next()).value as Message;
    expect(result.id).toBe(7);
    expect(result.result.structuredContent).toMatchObject({ confirmation: expected, applied: answer === "accept" });
    expect(await keysUnder(bucket, prefix)).toEqual(answer === "accept" ? [] : keys);
  }
  // The answer went through the other replica, which logged it as an answer.
  expect(b!.stderr()).toMatch(/http POST \/mcp "answer" 202 .*caller="label:alice"/);
}, 60_000);

test("raw: a session id is the caller's own; another caller presenting it is not asked (and no session, no question)", async () => {
  const session = await initialize(replicas[0]!.url, ALICE);
  await put("bob-session/", 1);
  const res = await rpc(replicas[1]!.url, deleteCall("bob-session/"), headers(BOB, session));
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(((await res.json()) as Message).result.structuredContent).toMatchObject({ confirmation: "not_asked" });
  // A client that declared no elicitation gets no session id (nothing to carry).
  const plain = await rpc(
    replicas[0]!.url,
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    },
    { authorization: `Bearer ${ALICE}` },
  );
  expect(plain.headers.get("mcp-session-id")).toBeNull();
}, 30_000);

async function v2Client(url: string, answer: Answer, asked: string[]): Promise<Client> {
  const client = new Client(
    { name: "legacy-confirm", version: "1" },
    { versionNegotiation: { mode: "legacy" } as never, capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push((request.params as { message: string }).message);
    return ANSWERS[answer];
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }),
  );
  return client;
}

for (const answer of ["decline", "accept"] as const) {
  test(`the TS v2 client (legacy handshake) through nginx: ${answer} ${answer === "accept" ? "deletes" : "keeps every object"}`, async () => {
    const prefix = `v2-${answer}/`;
    const keys = await put(prefix, 3);
    // Several calls, so round robin puts questions and answers on either replica.
    for (let round = 0; round < 2; round++) {
      const asked: string[] = [];
      const client = await v2Client(nginx.url, answer, asked);
      try {
        const r = (await client.callTool({
          name: "delete_objects",
          arguments: { bucket_name: bucket, prefix, confirm: true },
        })) as { structuredContent?: Record<string, unknown> };
        if (answer === "decline" || round === 0) {
          expect(asked).toEqual([expect.stringContaining("Delete 3 object(s)")]);
          expect(r.structuredContent).toMatchObject(
            answer === "accept"
              ? { confirmation: "accepted", applied: true, deleted_count: 3 }
              : { confirmation: "declined", applied: false },
          );
        }
      } finally {
        await client.close();
      }
    }
    expect(await keysUnder(bucket, prefix)).toEqual(answer === "accept" ? [] : keys);
  }, 60_000);

  test(`the Python SDK 2.3 ClientSession through nginx: ${answer} ${answer === "accept" ? "deletes" : "keeps every object"}`, async () => {
    const prefix = `py-${answer}/`;
    const keys = await put(prefix, 2);
    const proc = Bun.spawn([PYTHON, DRIVER, JSON.stringify({ url: nginx.url, token: ALICE, bucket, prefix, answer })], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect(code, err.slice(-3000)).toBe(0);
    const run = JSON.parse(out);
    expect(run.protocol).toBe("2025-11-25");
    expect(run.asked).toEqual([expect.stringContaining("Delete 2 object(s)")]);
    expect(run.structured).toMatchObject(
      answer === "accept" ? { confirmation: "accepted", applied: true } : { confirmation: "declined", applied: false },
    );
    expect(await keysUnder(bucket, prefix)).toEqual(answer === "accept" ? [] : keys);
  }, 60_000);
}

test("without a state store, one replica asks and takes its own answer", async () => {
  for (const answer of ["decline", "accept"] as const) {
    const prefix = `alone-${answer}/`;
    const keys = await put(prefix, 1);
    const asked: string[] = [];
    const client = await v2Client(alone.url, answer, asked);
    try {
      const r = (await client.callTool({
        name: "delete_objects",
        arguments: { bucket_name: bucket, prefix, confirm: true },
      })) as { structuredContent?: Record<string, unknown> };
      expect(asked.length).toBe(1);
      expect(r.structuredContent).toMatchObject({ confirmation: answer === "accept" ? "accepted" : "declined" });
    } finally {
      await client.close();
    }
    expect(await keysUnder(bucket, prefix)).toEqual(answer === "accept" ? [] : keys);
  }
}, 30_000);
