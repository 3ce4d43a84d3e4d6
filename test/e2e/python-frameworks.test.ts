/**
 * The Python MCP agent frameworks, each in the venv provision.sh builds (from
 * ../shared/pyfw offline, or from PyPI on a newcomer's machine), against the
 * compiled binary and Ceph RGW: the tools as the framework converts them,
 * direct calls through the framework's own call path (with null / "" fill-ins),
 * a text, an image and a binary read, a tool error, and one agent run to the
 * end against a stand-in model on loopback (OpenAI chat; Anthropic too where
 * the framework has it). Each runner (test/clients/pyfw/*.py) prints one JSON
 * line; what it says is asserted here.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { tempDir } from "../helpers/files.ts";
import { type HttpBinary, startHttpBinary } from "../helpers/http.ts";
import { connectBinary, requireBinary } from "../helpers/mcp.ts";
import { pngOf } from "../helpers/png.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";
import { startStandInAnthropic } from "../helpers/stand-in-anthropic.ts";
import { type ScriptedCall, startStandInOpenAI } from "../helpers/stand-in-openai.ts";

const VENVS = resolve(import.meta.dir, "../../.tools/pyfw");
const RUNNERS = resolve(import.meta.dir, "../clients/pyfw");
const TOKEN = "python-frameworks-token-0123456789";
const TEXT = "hello from the store";
let bucket: string;
let dir: string;
let http: HttpBinary;
/** Each tool's required parameters, as tools/list advertises them. */
let required: Record<string, string[]>;

beforeAll(async () => {
  for (const venv of ["venv-lc", "venv-oai", "venv-pai", "venv-smol"]) {
    if (!existsSync(resolve(VENVS, venv, "bin/python")))
      throw new Error(
        `${VENVS}/${venv} is missing: bash scripts/provision.sh test builds the Python frameworks' venvs`,
      );
  }
  bucket = await freshBucket("pyfw");
  dir = tempDir("pyfw");
  const put = (Key: string, Body: string | Uint8Array, ContentType: string) =>
    sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body, ContentType }));
  await put("notes.txt", TEXT, "text/plain");
  await put("pixel.png", pngOf(2, 2), "image/png");
  await put("blob.bin", Uint8Array.from([0, 1, 2, 3, 255, 254, 253]), "application/octet-stream");
  http = await startHttpBinary({ env: { ...s3Env(), STORE_HTTP_TOKENS: `py:${TOKEN}` } });
  const session = await connectBinary({ env: s3Env(), args: ["--allowed-dir", dir] });
  try {
    required = Object.fromEntries(
      (await session.client.listTools()).tools.map((t) => [t.name, [...(t.inputSchema.required ?? [])].sort()]),
    );
  } finally {
    await session.close();
  }
}, 60_000);
afterAll(() => http?.stop());

/** Runs one framework's runner with the stand-in models' addresses; its JSON line. */
async function run(venv: string, runner: string, extra: Record<string, string> = {}): Promise<Record<string, any>> {
  const proc = Bun.spawn([resolve(VENVS, venv, "bin/python"), resolve(RUNNERS, runner)], {
    cwd: RUNNERS,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/root",
      ...s3Env(),
      STORE_MCP_BINARY: requireBinary(),
      PYFW_BUCKET: bucket,
      PYFW_DIR: dir,
      PYFW_HTTP_URL: http.url,
      PYFW_HTTP_TOKEN: TOKEN,
      ...extra,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill(), 110_000);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  expect(code, err.slice(-3000)).toBe(0);
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

/** The model's scripted turn: read notes.txt with only the required arguments, as a model would. */
const readNotes = (): ScriptedCall[] => [
  { tool: "get_object", arguments: { bucket_name: bucket, object_key: "notes.txt" } },
];

/** Tools with a parameter of any keys (metadata), which OpenAI strict mode cannot express. */
const FREE_FORM = ["copy_object", "put_object"];
/** What a remote server without --allowed-dir leaves out. */
const LOCAL_FILE_TOOLS = ["upload_file", "upload_directory", "download_prefix"];

/** The tools a transport offers: a remote server without --allowed-dir has no local-file tools. */
const toolsOver = (transport: "stdio" | "http") =>
  Object.keys(required)
    .filter((t) => transport === "stdio" || !LOCAL_FILE_TOOLS.includes(t))
    .sort();

/** What every framework's direct calls must show, over one transport. */
function expectCalls(calls: Record<string, { ok: boolean; value?: string; error?: string }>, transport: string): void {
  expect(calls.text!.value, transport).toContain(TEXT);
  expect(calls.filled!.value, transport).toContain(TEXT);
  expect(calls.image, transport).toMatchObject({ ok: true });
  expect(calls.binary!.value, transport).toContain("include_binary");
  expect(calls.binary_included, transport).toMatchObject({ ok: true });
  expect(calls.error!.ok ? calls.error!.value : calls.error!.error, transport).toContain("NoSuchKey");
  expect(calls.usage, transport).toMatchObject({ ok: true });
}

describe("smolagents (mcpadapt)", () => {
  test("every tool requires exactly what tools/list requires (optional inputs say nullable); calls, reads and an agent run go through", async () => {
    const model = startStandInOpenAI(readNotes());
    try {
      const out = await run("venv-smol", "smol.py", { PYFW_OPENAI_URL: model.url });
      expect(out.tools.sort()).toEqual(Object.keys(required).sort());
      for (const [name, inputs] of Object.entries(out.required as Record<string, string[]>))
        expect([name, inputs]).toEqual([name, required[name] ?? ["(not a tool)"]]);
      expect(out.calls.text).toMatchObject({ ok: true });
      expect(out.calls.text.value).toContain(TEXT);
      expect(out.calls.filled).toMatchObject({ ok: true });
      expect(out.calls.filled.value).toContain(TEXT);
      expect(out.calls.image).toMatchObject({ ok: true });
      expect(out.calls.image.value).toContain("PIL");
      expect(out.calls.binary.value).toContain("include_binary");
      // mcpadapt takes the first content item and knows no embedded resource: why the default read carries no bytes (docs/clients.md).
      expect(out.calls.binary_included).toMatchObject({
        ok: false,
        error: expect.stringContaining("EmbeddedResource"),
      });
      expect(out.calls.error.ok ? out.calls.error.value : out.calls.error.error).toContain("NoSuchKey");
      expect(out.calls.usage).toMatchObject({ ok: true });
      // Over Streamable HTTP (a remote server without --allowed-dir: no local-file tools).
      expect(out.http.tools.sort()).toEqual(
        Object.keys(required)
          .filter((t) => !LOCAL_FILE_TOOLS.includes(t))
          .sort(),
      );
      expect(out.http.calls.text.value).toContain(TEXT);
      expect(out.http.calls.filled.value).toContain(TEXT);
      expect(out.agent, JSON.stringify(out.agent)).toMatchObject({ ok: true });
      // smolagents hands the model the tool's output as a user message ("Observation: …").
      expect(model.transcript).toContain(TEXT);
    } finally {
      model.stop();
    }
  }, 120_000);
});

describe("OpenAI Agents SDK for Python", () => {
  test("every tool converts to a strict schema; calls over stdio and HTTP, reads and an agent run go through", async () => {
    const model = startStandInOpenAI(readNotes());
    try {
      const out = await run("venv-oai", "oai.py", { PYFW_OPENAI_URL: model.url });
      for (const transport of ["stdio", "http"] as const) {
        const got = out[transport];
        expect(got.tools.sort(), transport).toEqual(toolsOver(transport));
        // A free-form object (metadata: any keys) cannot be strict; the SDK serves those two tools non-strict, as it should.
        expect(got.strict.sort(), transport).toEqual(toolsOver(transport).filter((t) => !FREE_FORM.includes(t)));
        expectCalls(got.calls, transport);
        expect(got.calls.image.value, transport).toContain("image");
      }
      expect(out.agent, JSON.stringify(out.agent)).toMatchObject({ ok: true });
      expect(JSON.stringify(model.results)).toContain(TEXT);
      // Strict conversion: every parameter required, optional ones nullable — what the model was offered.
      const offered = model.offered.get("get_object") as { required: string[] };
      expect(offered.required).toContain("version_id");
    } finally {
      model.stop();
    }
  }, 120_000);
});

describe("Pydantic AI (MCPToolset, MCP SDK v2)", () => {
  test("calls over stdio and HTTP, reads, and agent runs to the end with OpenAI chat and Anthropic", async () => {
    const openai = startStandInOpenAI(readNotes());
    const anthropic = startStandInAnthropic({
      tool: "get_object",
      input: { bucket_name: bucket, object_key: "notes.txt" },
    });
    try {
      const out = await run("venv-pai", "pai.py", { PYFW_OPENAI_URL: openai.url, PYFW_ANTHROPIC_URL: anthropic.url });
      for (const transport of ["stdio", "http"] as const) {
        const got = out[transport];
        expect(got.tools.sort(), transport).toEqual(toolsOver(transport));
        expectCalls(got.calls, transport);
      }
      expect(out.agent_openai, JSON.stringify(out.agent_openai)).toMatchObject({ ok: true });
      expect(JSON.stringify(openai.results)).toContain(TEXT);
      expect(out.agent_anthropic, JSON.stringify(out.agent_anthropic)).toMatchObject({ ok: true });
      expect(JSON.stringify(anthropic.results)).toContain(TEXT);
    } finally {
      openai.stop();
      anthropic.stop();
    }
  }, 120_000);
});

describe("LangChain (langchain-mcp-adapters)", () => {
  test("tools convert for OpenAI (strict where the schema allows, plain always); calls over stdio and HTTP, reads and a create_agent run go through", async () => {
    const model = startStandInOpenAI(readNotes());
    try {
      const out = await run("venv-lc", "lc.py", { PYFW_OPENAI_URL: model.url });
      for (const transport of ["stdio", "http"] as const) {
        const got = out[transport];
        expect(got.tools.sort(), transport).toEqual(toolsOver(transport));
        expect(got.converted.plain.sort(), transport).toEqual(toolsOver(transport));
        expect(got.converted.strict.sort(), transport).toEqual(toolsOver(transport));
        // include_binary's bytes go to the artifact, not to the model's content (what LangChain does with an embedded binary resource).
        expectCalls(got.calls, transport);
      }
      expect(out.agent, JSON.stringify(out.agent)).toMatchObject({ ok: true });
      expect(JSON.stringify(model.results)).toContain(TEXT);
    } finally {
      model.stop();
    }
  }, 120_000);
});
