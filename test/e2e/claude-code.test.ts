/**
 * Claude Code (the real CLI, pinned, from npm) against the compiled server:
 * `claude mcp list` connects over stdio and Streamable HTTP (and names a
 * wrong token's 401), and `claude -p` against a stand-in for the Anthropic
 * API on loopback (test/helpers/stand-in-anthropic.ts) records exactly what
 * Claude Code hands its model for a tool result: JSON.stringify of
 * structuredContent, without the text blocks. So every next step must be in
 * structuredContent (`next`), and a binary read must not carry base64.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { tempDir } from "../helpers/files.ts";
import { type HttpBinary, startHttpBinary } from "../helpers/http.ts";
import { requireBinary } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";
import { startStandInAnthropic } from "../helpers/stand-in-anthropic.ts";

const CLAUDE = resolve(import.meta.dir, "../../.tools/agents/node_modules/@anthropic-ai/claude-code-linux-x64/claude");
const TOKEN = "claude-code-test-token-0123456789";
let bucket: string;
let http: HttpBinary;

beforeAll(async () => {
  if (!existsSync(CLAUDE))
    throw new Error(`${CLAUDE} is missing: bash scripts/provision.sh test installs Claude Code from npm`);
  bucket = await freshBucket("claude");
  const put = (Key: string, Body: string | Uint8Array, ContentType: string) =>
    sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body, ContentType }));
  await put("long.txt", "0123456789".repeat(50), "text/plain");
  await put("blob.bin", Uint8Array.from([0, 1, 2, 3, 255, 254]), "application/octet-stream");
  await put("second.txt", "two", "text/plain");
  http = await startHttpBinary({ env: { ...s3Env(), STORE_HTTP_TOKENS: `claude:${TOKEN}` } });
}, 60_000);
afterAll(async () => {
  await http.stop();
});

/** A throwaway HOME, so nothing of the machine's own Claude Code settings takes part. */
function claudeEnv(extra: Record<string, string> = {}): Record<string, string> {
  const home = tempDir("claude-home");
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...extra,
  };
}

async function run(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([CLAUDE, ...args], { cwd: env.HOME, env, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(), 90_000);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { code, out, err };
}

test("claude mcp list connects over stdio and HTTP; a wrong token shows the server's 401 reason", async () => {
  const env = claudeEnv();
  const stdioEnv = Object.entries(s3Env()).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  for (const add of [
    ["mcp", "add", "-s", "user", "s3", ...stdioEnv, "--", requireBinary()],
    [
      "mcp",
      "add",
      "-s",
      "user",
      "--transport",
      "http",
      "s3http",
      http.url,
      "--header",
      `Authorization: Bearer ${TOKEN}`,
    ],
    [
      "mcp",
      "add",
      "-s",
      "user",
      "--transport",
      "http",
      "s3bad",
      http.url,
      "--header",
      "Authorization: Bearer not-the-token-0000000000",
    ],
  ]) {
    const added = await run(add, env);
    expect(added.code, added.err).toBe(0);
  }
  const listed = await run(["mcp", "list"], env);
  expect(listed.out).toMatch(/^s3: .* - ✔ Connected$/m);
  expect(listed.out).toMatch(/^s3http: .* \(HTTP\) - ✔ Connected$/m);
  expect(listed.out).toMatch(/^s3bad: .*401.*the token is not one this server accepts/m);
}, 120_000);

/** One `claude -p` turn in which the stand-in model calls `tool` with `input`; what Claude Code sent back as the tool result. */
async function modelReceives(tool: string, input: Record<string, unknown>): Promise<string> {
  const api = startStandInAnthropic({ tool: `mcp__s3__${tool}`, input });
  try {
    const env = claudeEnv({
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: "sk-ant-stand-in-000000",
      ENABLE_TOOL_SEARCH: "false",
    });
    const config = join(env.HOME!, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { s3: { command: requireBinary(), args: [], env: s3Env() } } }));
    const r = await run(
      [
        "-p",
        "Use the object store.",
        "--mcp-config",
        config,
        "--strict-mcp-config",
        "--allowedTools",
        "mcp__s3",
        "--output-format",
        "json",
        "--model",
        "claude-sonnet-4-5",
      ],
      env,
    );
    expect(r.code, r.err + r.out.slice(0, 500)).toBe(0);
    expect(api.offered.has(`mcp__s3__${tool}`)).toBe(true);
    expect(api.results.length, `no tool result reached the stand-in: ${r.out.slice(0, 500)}`).toBe(1);
    const content = api.results[0]!.content;
    return typeof content === "string" ? content : JSON.stringify(content);
  } finally {
    api.stop();
  }
}

/** The structuredContent Claude Code passed on (it appends a system reminder after the JSON). */
const structuredIn = (received: string) =>
  JSON.parse(received.slice(0, received.lastIndexOf("}") + 1).replace(/\n\n<system-reminder>[\s\S]*$/, ""));

test("claude -p: a truncated read reaches the model as structuredContent only, and its next step is in it", async () => {
  const received = await modelReceives("get_object", {
    bucket_name: bucket,
    object_key: "long.txt",
    max_content_size: 100,
  });
  // The text blocks are dropped (the summary with "TRUNCATED" is not there): only the JSON.
  expect(received).not.toContain("TRUNCATED");
  const structured = structuredIn(received);
  expect(structured).toMatchObject({ text: "0123456789".repeat(10), truncated: true, next_offset: 100 });
  expect(structured.next).toContain("offset 100");
}, 120_000);

test("claude -p: a binary read carries no base64 by default, and says how to get the bytes", async () => {
  const received = await modelReceives("get_object", { bucket_name: bucket, object_key: "blob.bin" });
  expect(received).not.toContain("AAECA//+");
  const structured = structuredIn(received);
  expect(structured).toMatchObject({ size: 6, content_type: "application/octet-stream", encoding: "none" });
  expect(structured.next).toContain("include_binary: true");
}, 120_000);

test("claude -p: a listing page tells the model how to continue", async () => {
  const structured = structuredIn(await modelReceives("list_objects", { bucket_name: bucket, max_keys: 1 }));
  expect(structured.is_truncated).toBe(true);
  expect(structured.next).toContain(`continuation_token "${structured.next_continuation_token}"`);
}, 120_000);

test("claude -p: a prompt picked as a slash command (/mcp__s3__share_file) reaches the model as its recipe, and the model's first step runs", async () => {
  await sdkClient().send(
    new PutObjectCommand({ Bucket: bucket, Key: "reports/q1.pdf", Body: "pdf", ContentType: "application/pdf" }),
  );
  const api = startStandInAnthropic({
    tool: "mcp__s3__head_object",
    input: { bucket_name: bucket, object_key: "reports/q1.pdf" },
  });
  try {
    const env = claudeEnv({
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: "sk-ant-stand-in-000000",
      ENABLE_TOOL_SEARCH: "false",
    });
    const config = join(env.HOME!, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { s3: { command: requireBinary(), args: [], env: s3Env() } } }));
    const r = await run(
      [
        "-p",
        `/mcp__s3__share_file ${bucket} reports/q1.pdf`,
        "--mcp-config",
        config,
        "--strict-mcp-config",
        "--allowedTools",
        "mcp__s3",
        "--output-format",
        "json",
        "--model",
        "claude-sonnet-4-5",
      ],
      env,
    );
    expect(r.code, r.err + r.out.slice(0, 500)).toBe(0);
    const recipe = api.userTexts.find((t) => t.includes("presign_url"));
    expect(recipe, api.userTexts.join("\n---\n").slice(0, 2000)).toBeDefined();
    expect(recipe).toContain(`s3://${bucket}/reports/q1.pdf`);
    expect(recipe).toContain("expires_in 86400");
    // The model followed the recipe's first step: head_object's answer came back.
    expect(api.results).toHaveLength(1);
    expect(JSON.stringify(api.results[0]!.content)).toContain("application/pdf");
  } finally {
    api.stop();
  }
}, 120_000);
