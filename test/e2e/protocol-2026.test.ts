/**
 * One binary, both protocols: MCP 2026-07-28 (per-request, server/discover)
 * and the 2025 `initialize` handshake, as the v2 TypeScript client speaks
 * them — `auto` (probes with server/discover), pinned to 2026-07-28, and
 * `legacy` — over stdio and Streamable HTTP, against Ceph. The same tools,
 * schemas and answers on each; progress, cancellation, resources,
 * completions and prompts on 2026-07-28; the object browser advertised as
 * the io.modelcontextprotocol/ui extension, the prompts as skills
 * (io.modelcontextprotocol/skills); and confirmations on 2026-07-28
 * as `input_required` (the client asks the user and calls again), remote
 * mode included, with the same effect of a yes, a no and no answer.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ANSWERS, type Answer } from "../helpers/elicitation.ts";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { type HttpBinary, startHttpBinary } from "../helpers/http.ts";
import { requireBinary } from "../helpers/mcp.ts";
import { freshBucket, keysUnder, s3, s3Env, sdkClient } from "../helpers/s3.ts";

type Mode = "auto" | "pinned" | "legacy";
const MODES: Mode[] = ["auto", "pinned", "legacy"];
const MiB = 1024 * 1024;
const TOKEN = "protocol-2026-token-0123456789";

/** A v2 client; with `asker`, it declares elicitation and answers each form as the asker says (recording the question). */
function newClient(mode: Mode, asker?: { answer: Answer; asked: string[] }): Client {
  const versionNegotiation = { mode: mode === "pinned" ? { pin: "2026-07-28" } : mode } as const;
  const client = new Client(
    { name: "protocol-2026-test", version: "1.0.0" },
    {
      versionNegotiation: versionNegotiation as never,
      ...(asker ? { capabilities: { elicitation: { form: {} } } } : {}),
    },
  );
  if (asker)
    client.setRequestHandler("elicitation/create", async (request) => {
      asker.asked.push((request.params as { message: string }).message);
      return ANSWERS[asker.answer];
    });
  return client;
}

async function overStdio(
  mode: Mode,
  args: string[],
  env: Record<string, string>,
  asker?: { answer: Answer; asked: string[] },
): Promise<Client> {
  const client = newClient(mode, asker);
  await client.connect(
    new StdioClientTransport({
      command: requireBinary(),
      args,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...env },
      stderr: "ignore",
    }),
  );
  return client;
}

async function overHttp(mode: Mode, url: string, asker?: { answer: Answer; asked: string[] }): Promise<Client> {
  const client = newClient(mode, asker);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }),
  );
  return client;
}

const structured = (r: unknown) => (r as { structuredContent?: Record<string, unknown> }).structuredContent ?? {};
const text = (r: unknown) =>
  ((r as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("\n");

let bucket: string;
let dir: string;
let proxy: FaultProxy;
let http: HttpBinary;
let auditFile: string;

beforeAll(async () => {
  bucket = await freshBucket("proto26");
  dir = tempDir("proto26");
  proxy = await startFaultProxy(s3().endpoint);
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "docs/readme.md", Body: "# hello 2026" }));
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: randomBytes(24 * MiB, 26) }));
  auditFile = join(tempDir("proto26-audit"), "audit.log");
  http = await startHttpBinary({
    env: { ...s3Env(), STORE_HTTP_TOKENS: `team:${TOKEN}` },
    args: ["--allow-delete", "--audit-log", auditFile],
  });
}, 120_000);
afterAll(async () => {
  await http?.stop();
  await proxy?.stop();
});

describe.each(["stdio", "http"] as const)("over %s", (transport) => {
  const connect = (mode: Mode, asker?: { answer: Answer; asked: string[] }) =>
    transport === "stdio" ? overStdio(mode, ["--allow-delete"], s3Env(), asker) : overHttp(mode, http.url, asker);

  test("each mode settles on its protocol; tools/list, capabilities and answers are the same on both", async () => {
    const seen: Record<string, { tools: unknown; extensions: unknown; read: unknown; era: string | undefined }> = {};
    for (const mode of MODES) {
      const client = await connect(mode);
      try {
        const era = client.getProtocolEra();
        expect(era, mode).toBe(mode === "legacy" ? "legacy" : "modern");
        expect(client.getNegotiatedProtocolVersion(), mode).toBe(mode === "legacy" ? "2025-11-25" : "2026-07-28");
        const tools = (await client.listTools()).tools.map((t) => ({
          name: t.name,
          inputSchema: t.inputSchema,
          annotations: t.annotations,
          _meta: t._meta,
        }));
        const read = await client.callTool({
          name: "get_object",
          arguments: { bucket_name: bucket, object_key: "docs/readme.md" },
        });
        expect(read.isError, text(read)).toBeFalsy();
        expect(structured(read)).toMatchObject({ text: "# hello 2026", size: 12 });
        seen[mode] = { tools, extensions: client.getServerCapabilities()?.extensions, read: structured(read), era };
      } finally {
        await client.close();
      }
    }
    expect(seen.auto!.tools).toEqual(seen.legacy!.tools);
    expect(seen.pinned!.tools).toEqual(seen.legacy!.tools);
    expect(seen.pinned!.read).toEqual(seen.legacy!.read);
    for (const mode of MODES)
      expect(seen[mode]!.extensions, mode).toEqual({
        "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] },
        "io.modelcontextprotocol/skills": {},
        // Tasks (tasks.ts, tested in tasks.test.ts): calls that may be handed back as jobs may become tasks.
        "io.modelcontextprotocol/tasks": {},
      });
  }, 60_000);

  test("2026-07-28: resources, completions, prompts, lenient arguments and an unknown tool", async () => {
    const client = await connect("pinned");
    try {
      const resource = await client.readResource({ uri: `s3://${bucket}/docs/readme.md` });
      expect((resource.contents[0] as { text?: string }).text).toBe("# hello 2026");
      const missing = await client
        .readResource({ uri: `s3://${bucket}/docs/nope.md` })
        .catch((e: { code: number; data?: { uri?: string } }) => e);
      expect((missing as { code: number }).code).toBe(-32602);
      const buckets = await client.complete({
        ref: { type: "ref/prompt", name: "share_file" },
        argument: { name: "bucket", value: bucket.slice(0, 12) },
      });
      expect(buckets.completion.values).toContain(bucket);
      const prompt = await client.getPrompt({ name: "share_file", arguments: { bucket, key: "docs/readme.md" } });
      expect(JSON.stringify(prompt.messages)).toContain("presign_url");
      // The same recipes as skills (SEP-2640): listed with their digests, SKILL.md read through the extension.
      const skills = new SkillsClient(client);
      expect(skills.supported).toBe(true);
      const listed = await skills.list();
      // Remote mode without --allowed-dir has no upload_directory, so no upload-folder: the same offering rule as the prompts.
      expect(listed.skills.map((k) => k.frontmatter.name).sort()).toEqual([
        "clean-up",
        "find-space",
        "review-exposure",
        "share-file",
        ...(transport === "stdio" ? ["upload-folder"] : []),
      ]);
      const share = listed.skills.find((k) => k.frontmatter.name === "share-file")!;
      const file = await skills.read(share);
      const markdown = new TextDecoder().decode((file as unknown as { bytes: Uint8Array }).bytes);
      expect(markdown).toContain("presign_url");
      expect(markdown).toContain("`<bucket>`");
      // A null and a parameter the tool does not take, as clients send them: ignored, and said so.
      const lenient = await client.callTool({
        name: "head_object",
        arguments: { bucket_name: bucket, object_key: "docs/readme.md", version_id: null, wait_for_previous: true },
      });
      expect(lenient.isError, text(lenient)).toBeFalsy();
      expect(structured(lenient).ignored_parameters).toEqual(["wait_for_previous"]);
      const unknown = await client.callTool({ name: "no_such_tool", arguments: {} });
      expect(unknown.isError).toBe(true);
      expect(text(unknown)).toContain("not found");
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe("2026-07-28 over stdio: progress and cancellation", () => {
  let client: Client;
  beforeAll(async () => {
    client = await overStdio("pinned", ["--allowed-dir", dir], {
      ...s3Env(),
      STORE_ENDPOINT_URL: proxy.endpoint,
      STORE_STATE_DIR: "off",
    });
  });
  afterAll(() => client?.close());

  test("a download reports its bytes as it goes", async () => {
    proxy.set({ kind: "throttle", bytesPerSecond: 4 * MiB });
    const updates: { progress: number; total?: number }[] = [];
    const r = await client.callTool(
      {
        name: "get_object",
        arguments: { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: "big.bin" },
      },
      { onprogress: (p) => updates.push(p) },
    );
    proxy.set({ kind: "pass" });
    expect(r.isError, text(r)).toBeFalsy();
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates.at(-1)!.total).toBe(24 * MiB);
    expect(readFileSync(join(dir, "big.bin")).length).toBe(24 * MiB);
  }, 60_000);

  test("a cancelled download stops and leaves nothing; the server goes on", async () => {
    proxy.set({ kind: "throttle", bytesPerSecond: 2 * MiB });
    const controller = new AbortController();
    const pending = client.callTool(
      {
        name: "get_object",
        arguments: { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: "cut/big.bin" },
      },
      { signal: controller.signal },
    );
    await Bun.sleep(700);
    controller.abort();
    await expect(pending).rejects.toThrow();
    proxy.set({ kind: "pass" });
    await Bun.sleep(1_000);
    expect(existsSync(join(dir, "cut")) ? readdirSync(join(dir, "cut")) : []).toEqual([]);
    const after = await client.callTool({ name: "list_buckets", arguments: {} });
    expect(after.isError).toBeFalsy();
  }, 60_000);
});

describe("2026-07-28 confirmations as input_required", () => {
  /** Calls `tool` with a client answering `answer`; returns the result and the questions asked. */
  async function confirmed(
    client: Client,
    asker: { answer: Answer; asked: string[] },
    answer: Answer,
    tool: string,
    args: Record<string, unknown>,
  ) {
    asker.answer = answer;
    const before = asker.asked.length;
    const result = await client.callTool({ name: tool, arguments: { ...args, confirm: true } });
    expect(result.isError, text(result)).toBeFalsy();
    return { result, asked: asker.asked.length - before };
  }

  for (const transport of ["stdio", "http"] as const) {
    test(`over ${transport}: delete_objects, put_object_tags and a move — no, unticked and dismissed change nothing; yes applies`, async () => {
      const asker = { answer: "decline" as Answer, asked: [] as string[] };
      const client =
        transport === "stdio"
          ? await overStdio("pinned", ["--allow-delete", "--allow-admin"], s3Env(), asker)
          : await overHttp("pinned", http.url, asker);
      const prefix = `${transport}-del/`;
      try {
        await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}1.txt`, Body: "1" }));
        for (const answer of ["decline", "unticked", "cancel"] as const) {
          const { result, asked } = await confirmed(client, asker, answer, "delete_objects", {
            bucket_name: bucket,
            prefix,
          });
          expect(asked, answer).toBe(1);
          expect(structured(result), answer).toMatchObject({
            confirmation: answer === "cancel" ? "cancelled" : "declined",
            dry_run: false,
          });
          expect(await keysUnder(bucket, prefix)).toEqual([`${prefix}1.txt`]);
        }
        expect(asker.asked.at(-1)).toContain("Delete 1 object(s)");
        const yes = await confirmed(client, asker, "accept", "delete_objects", { bucket_name: bucket, prefix });
        expect(structured(yes.result)).toMatchObject({ confirmation: "accepted", applied: true, deleted_count: 1 });
        expect(await keysUnder(bucket, prefix)).toEqual([]);
        if (transport === "stdio") {
          await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "t.txt", Body: "t" }));
          const no = await confirmed(client, asker, "decline", "put_object_tags", {
            bucket_name: bucket,
            object_key: "t.txt",
            tags: { team: "a" },
          });
          expect(structured(no.result)).toMatchObject({ confirmation: "declined" });
          const tagged = await confirmed(client, asker, "accept", "put_object_tags", {
            bucket_name: bucket,
            object_key: "t.txt",
            tags: { team: "a" },
          });
          expect(structured(tagged.result)).toMatchObject({ confirmation: "accepted", applied: true });
          await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "mv/a.txt", Body: "a" }));
          const kept = await confirmed(client, asker, "cancel", "copy_prefix", {
            source_bucket: bucket,
            source_prefix: "mv/",
            bucket_name: bucket,
            prefix: "moved/",
            move: true,
          });
          expect(structured(kept.result)).toMatchObject({ confirmation: "cancelled" });
          expect(await keysUnder(bucket, "moved/")).toEqual([]);
          const moved = await confirmed(client, asker, "accept", "copy_prefix", {
            source_bucket: bucket,
            source_prefix: "mv/",
            bucket_name: bucket,
            prefix: "moved/",
            move: true,
          });
          expect(structured(moved.result)).toMatchObject({ confirmation: "accepted" });
          expect(await keysUnder(bucket, "moved/")).toEqual(["moved/a.txt"]);
          expect(await keysUnder(bucket, "mv/")).toEqual([]);
        }
      } finally {
        await client.close();
      }
    }, 90_000);
  }

  test("no answer: the call ends at input_required and nothing changes; a 2025 remote call is asked on its stream", async () => {
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "keep/1.txt", Body: "1" }));
    const manual = new Client(
      { name: "no-answer", version: "1" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } } as never,
        capabilities: { elicitation: { form: {} } },
        inputRequired: { autoFulfill: false },
      },
    );
    await manual.connect(
      new StdioClientTransport({
        command: requireBinary(),
        args: ["--allow-delete"],
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...s3Env() },
        stderr: "ignore",
      }),
    );
    try {
      const pending = (await manual.callTool(
        { name: "delete_objects", arguments: { bucket_name: bucket, prefix: "keep/", confirm: true } },
        { allowInputRequired: true } as never,
      )) as unknown as { inputRequests?: Record<string, { method: string; params: { message: string } }> };
      const requests = Object.values(pending.inputRequests ?? {});
      expect(requests.length).toBe(1);
      expect(requests[0]!.method).toBe("elicitation/create");
      expect(requests[0]!.params.message).toContain("Delete 1 object(s)");
      await Bun.sleep(500);
      expect(await keysUnder(bucket, "keep/")).toEqual(["keep/1.txt"]);
    } finally {
      await manual.close();
    }
    // The 2025 protocol in remote mode asks too, on the call's own stream (legacy-confirm.test.ts: across replicas).
    const asked: string[] = [];
    const legacy = await overHttp("legacy", http.url, { answer: "decline", asked });
    try {
      const r = await legacy.callTool({
        name: "delete_objects",
        arguments: { bucket_name: bucket, prefix: "keep/", confirm: true },
      });
      expect(structured(r)).toMatchObject({ confirmation: "declined", applied: false });
      expect(asked).toEqual([expect.stringContaining("Delete 1 object(s)")]);
      expect(await keysUnder(bucket, "keep/")).toEqual(["keep/1.txt"]);
    } finally {
      await legacy.close();
    }
  }, 60_000);

  test("remote mode writes one audit line per call on either protocol, the asked round included", async () => {
    const lines = readFileSync(auditFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { action: string; outcome: string });
    const deletes = lines.filter((l) => l.action === "delete_objects");
    expect(deletes.some((l) => l.outcome === "InputRequired")).toBe(true);
    expect(deletes.filter((l) => l.outcome === "ok").length).toBeGreaterThanOrEqual(5);
  });
});

describe("remote mode on 2026-07-28: the edge and the long calls as on 2025", () => {
  test("a call past the budget answers a job handle; job_status waits for the result; a caller over its rate gets 429; Host and batches are checked first", async () => {
    const slow = await startHttpBinary({
      env: {
        ...s3Env(),
        STORE_ENDPOINT_URL: proxy.endpoint,
        STORE_HTTP_TOKENS: `team:${TOKEN}`,
        STORE_STATE_DIR: "off",
        STORE_CALLER_RATE: "off",
      },
      args: ["--allowed-dir", dir, "--call-budget", "1"],
    });
    const client = await overHttp("pinned", slow.url);
    try {
      proxy.set({ kind: "throttle", bytesPerSecond: 6 * MiB });
      const handed = await client.callTool({
        name: "get_object",
        arguments: { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: "job/big.bin" },
      });
      const job = structured(handed).job as { id: string } | undefined;
      expect(job?.id, text(handed)).toBeDefined();
      let status = await client.callTool({ name: "job_status", arguments: { job_id: job!.id, wait_seconds: 20 } });
      for (let i = 0; i < 5 && (structured(status).job as { state: string }).state === "running"; i++)
        status = await client.callTool({ name: "job_status", arguments: { job_id: job!.id, wait_seconds: 20 } });
      proxy.set({ kind: "pass" });
      expect(structured(status).job).toMatchObject({ state: "done", tool: "get_object" });
      expect(readFileSync(join(dir, "job", "big.bin")).length).toBe(24 * MiB);
    } finally {
      proxy.set({ kind: "pass" });
      await client.close();
      await slow.stop();
    }
    const OTHER = "protocol-2026-other-token-012345";
    const limited = await startHttpBinary({
      env: {
        ...s3Env(),
        STORE_HTTP_TOKENS: `team:${TOKEN},other:${OTHER}`,
        STORE_CALLER_RATE: "2",
        STORE_CALLER_BURST: "2",
      },
    });
    const envelope = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(limited.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${TOKEN}`,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/list",
          ...headers,
        },
        body: JSON.stringify(body),
      });
    try {
      const list = { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope } };
      // Another caller's (each caller has its own rate): a foreign Host, then a batch.
      expect((await post(list, { host: "evil.example", authorization: `Bearer ${OTHER}` })).status).toBe(403);
      expect((await post([list, { ...list, id: 2 }], { authorization: `Bearer ${OTHER}` })).status).toBe(400);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await post({ ...list, id: 10 + i })).status);
      expect(statuses.slice(0, 2)).toEqual([200, 200]);
      expect(statuses.at(-1)).toBe(429);
    } finally {
      await limited.stop();
    }
  }, 90_000);

  test("SIGTERM while a 2026-07-28 call runs: it is answered (done, or 'shutting down' after the grace), the process exits 0", async () => {
    const server = await startHttpBinary({
      env: {
        ...s3Env(),
        STORE_ENDPOINT_URL: proxy.endpoint,
        STORE_HTTP_TOKENS: `team:${TOKEN}`,
        STORE_STATE_DIR: "off",
        STORE_SHUTDOWN_GRACE_MS: "500",
      },
      args: ["--allowed-dir", dir],
    });
    const client = await overHttp("pinned", server.url);
    try {
      proxy.set({ kind: "throttle", bytesPerSecond: 2 * MiB });
      const pending = client
        .callTool({
          name: "get_object",
          arguments: { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: "term/big.bin" },
        })
        .then(
          (r) => text(r),
          (e: Error) => e.message,
        );
      await Bun.sleep(700);
      const code = await server.stop();
      expect(code).toBe(0);
      expect(await pending).toMatch(/shutting down/i);
      expect(existsSync(join(dir, "term")) ? readdirSync(join(dir, "term")) : []).toEqual([]);
    } finally {
      proxy.set({ kind: "pass" });
      await client.close().catch(() => {});
    }
  }, 60_000);
});
