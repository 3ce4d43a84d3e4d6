/**
 * Claude Code (the real CLI, pinned) runs a long transfer as an MCP task: an
 * interactive session in tmux (its tasks are for interactive sessions; `claude
 * -p` asks for none), on a 2026-07-28 connection over stdio and over HTTP
 * (MCP_PROTOCOL_NEGOTIATION=auto), driving the stand-in model
 * (test/helpers/stand-in-anthropic.ts), which calls upload_file once and never
 * job_status. A 64 MiB upload through a slow link is handed back as a task
 * after a second, Claude Code moves it to the background and follows it
 * itself, tells the model when it has completed, and the object lands
 * byte-exact. A task stopped in Claude Code is cancelled on the server and
 * leaves nothing behind.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { GetObjectCommand, ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { startWanProxy, type WanProxy } from "../../scripts/bench/wan-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { startHttpBinary } from "../helpers/http.ts";
import { requireBinary } from "../helpers/mcp.ts";
import { freshBucket, keysUnder, s3, s3Env, sdkClient } from "../helpers/s3.ts";
import { startStandInAnthropic, type ToolCallScript } from "../helpers/stand-in-anthropic.ts";

const CLAUDE = resolve(import.meta.dir, "../../.tools/agents/node_modules/@anthropic-ai/claude-code-linux-x64/claude");
const KEY = "sk-ant-stand-in-000000";
const TOKEN = "claude-code-tasks-token-0123456789";
const MiB = 1024 * 1024;
let wan: WanProxy;
let bucket: string;

beforeAll(async () => {
  if (!existsSync(CLAUDE))
    throw new Error(`${CLAUDE} is missing: bash scripts/provision.sh test installs Claude Code from npm`);
  if (!Bun.which("tmux")) throw new Error("tmux is missing: bash scripts/provision.sh test installs it");
  // ~1.3 MB/s a connection: 64 MiB takes several seconds, far past the second after which a call becomes a task.
  wan = await startWanProxy(s3().endpoint, { delayMs: 50, windowBytes: 64 * 1024 });
  bucket = await freshBucket("cctask");
}, 60_000);
afterAll(() => wan?.stop());

const tmux = (socket: string, ...args: string[]) =>
  Bun.spawnSync(["tmux", "-L", socket, ...args], { stdout: "pipe", stderr: "pipe" });

async function until(what: string, ok: () => boolean, ms: number, about?: () => string): Promise<void> {
  for (const end = performance.now() + ms; !ok(); await Bun.sleep(250))
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}${about ? `\n${about()}` : ""}`);
}

/**
 * An interactive Claude Code session in tmux, past its first-run screens, with the stand-in model and our server:
 * over stdio (Claude Code starts it), or over HTTP (started here, in remote mode with a token).
 */
async function session(
  name: string,
  script: (work: string) => ToolCallScript,
  data: Uint8Array,
  transport: "stdio" | "http" = "stdio",
) {
  const home = tempDir(`cc-task-${name}`);
  const work = join(home, "work");
  mkdirSync(work);
  writeFileSync(join(work, "big.bin"), data);
  const serverLog = join(home, "server.log");
  const s3vars = { ...s3Env(), STORE_ENDPOINT_URL: wan.endpoint };
  // The server's own log, to see the hand-back (Claude Code keeps a stdio server's stderr to itself).
  const args = ["--allowed-dir", work, "--log-level", "debug"];
  const remote =
    transport === "http"
      ? await startHttpBinary({ env: { ...s3vars, STORE_HTTP_TOKENS: `cc:${TOKEN}`, STORE_CALLER_RATE: "off" }, args })
      : undefined;
  const s3server = remote
    ? { type: "http", url: remote.url, headers: { Authorization: `Bearer ${TOKEN}` } }
    : { command: "bash", args: ["-c", `exec ${requireBinary()} ${args.join(" ")} 2>>${serverLog}`], env: s3vars };
  const log = () => (remote ? remote.stderr() : existsSync(serverLog) ? readFileSync(serverLog, "utf8") : "");
  writeFileSync(join(home, "mcp.json"), JSON.stringify({ mcpServers: { s3: s3server } }));
  // A user past the first-run screens who trusts this folder and approved the key.
  writeFileSync(
    join(home, ".claude.json"),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: "dark",
      customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
      projects: { [work]: { hasTrustDialogAccepted: true, allowedTools: [] } },
    }),
  );
  const api = startStandInAnthropic(script(work));
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ANTHROPIC_BASE_URL: api.url,
    ANTHROPIC_API_KEY: KEY,
    ENABLE_TOOL_SEARCH: "false",
    MCP_PROTOCOL_NEGOTIATION: "auto",
  };
  const socket = `cctask${name}${process.pid}`;
  const claude = [CLAUDE, "--mcp-config", join(home, "mcp.json"), "--strict-mcp-config"];
  const started = tmux(
    socket,
    "new-session",
    "-d",
    "-s",
    "cc",
    "-x",
    "200",
    "-y",
    "50",
    "-c",
    work,
    ...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]),
    ...claude,
    "--allowedTools",
    "mcp__s3",
    "--model",
    "claude-sonnet-4-5",
  );
  expect(started.exitCode, started.stderr.toString()).toBe(0);
  const pane = () => tmux(socket, "capture-pane", "-p", "-t", "cc").stdout.toString();
  const close = () => {
    tmux(socket, "kill-server");
    api.stop();
    remote?.proc.kill("SIGKILL");
  };
  try {
    await until("the prompt", () => pane().includes("❯"), 30_000);
    await until("the server", () => log().includes("ready"), 30_000);
    await Bun.sleep(2_000); // its tools listed by Claude Code
  } catch (err) {
    close();
    throw err;
  }
  /** What the screen and the server's log say, for a wait that timed out. */
  const about = () => `screen:\n${pane()}\nserver log (end):\n${log().slice(-3000)}`;
  /**
   * Types the prompt and presses Enter until the model has it: on a loaded machine Claude Code may still be setting up
   * its input when the first Enter comes, and drop it. And it may send the prompt before it has listed the server's
   * tools (a loaded run did: the model, offered none, answered in words); then the prompt goes again, numbered, until
   * the request that carries it offers `tool`.
   */
  const ask = async (text: string, tool: string) => {
    for (let round = 1; ; round++) {
      const said = round === 1 ? text : `${text} (${round})`;
      const heard = () => api.userTexts.find((t) => t.includes(said));
      tmux(socket, "send-keys", "-t", "cc", "-l", said);
      await until("the prompt typed", () => pane().includes(said), 30_000, about);
      for (let tries = 0; !heard(); tries++) {
        if (tries === 6) throw new Error(`the model was never asked: ${about()}`);
        tmux(socket, "send-keys", "-t", "cc", "Enter");
        await until("the prompt sent", () => heard() !== undefined, 10_000).catch(() => {});
      }
      if (api.toolsWhenSaid.get(heard()!)?.has(tool)) return;
      if (round === 5) throw new Error(`${tool} was never offered with the prompt: ${about()}`);
      await Bun.sleep(2_000);
    }
  };
  return { api, work, log, close, ask, about };
}

for (const transport of ["stdio", "http"] as const)
  test(`an interactive Claude Code session runs a 64 MiB upload as a task (${transport}): the model never polls, it is told when the task completed, the object is byte-exact`, async () => {
    const data = randomBytes(64 * MiB, 23);
    const key = `task/${transport}.bin`;
    const cc = await session(
      `done-${transport}`,
      (work) => ({
        tool: "mcp__s3__upload_file",
        input: { local_file_path: join(work, "big.bin"), bucket_name: bucket, object_key: key },
      }),
      data,
      transport,
    );
    const { api, log: serverLog } = cc;
    try {
      await cc.ask("Upload it.", "mcp__s3__upload_file");
      // The call's answer reaches the model at once: a task moved to the background, not the upload's result.
      await until("the tool result", () => api.results.length > 0, 60_000, cc.about);
      const first = JSON.stringify(api.results[0]!.content);
      expect(first).toMatch(/started server-side task job_[A-Za-z0-9_-]{20,}/);
      const taskId = first.match(/job_[A-Za-z0-9_-]{20,}/)![0];
      // Claude Code follows the task itself and tells the model once it has completed.
      await until(
        "the task's completion",
        () => api.userTexts.some((t) => t.includes(taskId) && t.includes("completed")),
        90_000,
        cc.about,
      );
      const log = serverLog();
      expect(log).toContain(`upload_file bucket="${bucket}" key="${key}" handed back as ${taskId}`);
      expect(log).toContain(`upload_file bucket="${bucket}" key="${key}" ok in `);
      // The stand-in model called upload_file once and nothing else: no job_status, no second try.
      expect(log).not.toContain("job_status");
      expect(api.results).toHaveLength(1);
      const stored = await (
        await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: key }))
      ).Body!.transformToByteArray();
      const md5 = (b: Uint8Array) => createHash("md5").update(b).digest("hex");
      expect(md5(stored)).toBe(md5(data));
    } finally {
      cc.close();
    }
  }, 180_000);

test("a task stopped in Claude Code (its TaskStop, as a model asked to stop it calls it) is cancelled on the server: nothing at the key, no multipart upload left", async () => {
  let stopSchema: unknown;
  const cc = await session(
    "stop",
    (work) => ({
      tool: "mcp__s3__upload_file",
      input: { local_file_path: join(work, "big.bin"), bucket_name: bucket, object_key: "task/stopped.bin" },
      then: (text, schemas) => {
        stopSchema = schemas.get("TaskStop");
        const id = text.match(/moved to the background as task (\S+?)[.,]?\s/)?.[1];
        return id ? { tool: "TaskStop", input: { task_id: id } } : undefined;
      },
    }),
    randomBytes(64 * MiB, 24),
  );
  const { api, log: serverLog } = cc;
  try {
    await cc.ask("Upload it, then stop it.", "mcp__s3__upload_file");
    await until("TaskStop's result", () => api.results.length > 1, 60_000);
    expect(api.results[1]!.is_error, `${JSON.stringify(api.results[1])} ${JSON.stringify(stopSchema)}`).toBeFalsy();
    // Claude Code sent tasks/cancel: the upload stops, aborted at the store (a cancel keeps nothing to resume).
    await until(
      "the upload's end",
      () => /upload_file bucket="[^"]+" key="task\/stopped\.bin" failed in \d+ ms: Cancelled/.test(serverLog()),
      30_000,
    );
    await Bun.sleep(1_000);
    const uploads = await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: "task/stopped" }));
    expect(uploads.Uploads ?? []).toEqual([]);
    expect(await keysUnder(bucket, "task/stopped")).toEqual([]);
  } finally {
    cc.close();
  }
}, 180_000);
