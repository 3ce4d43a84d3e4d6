/**
 * Gemini CLI (the real CLI, pinned, from npm) against the compiled server:
 * it connects only in a trusted folder; headless (`gemini -p`) against a
 * stand-in for the Gemini API on loopback (test/helpers/stand-in-gemini.ts),
 * a call carrying Gemini CLI's own `wait_for_previous` argument works and
 * says what it ignored; and a store that is down when the CLI starts does
 * not take the server's tools away (Gemini CLI drops every tool of a server
 * whose resources/list fails).
 */

import { beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { NODE22 } from "../helpers/client-matrix.ts";
import { tempDir } from "../helpers/files.ts";
import { requireBinary } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";
import { startStandInGemini } from "../helpers/stand-in-gemini.ts";

const GEMINI = resolve(import.meta.dir, "../../.tools/agents/node_modules/@google/gemini-cli/bundle/gemini.js");
let bucket: string;

beforeAll(async () => {
  if (!existsSync(GEMINI))
    throw new Error(`${GEMINI} is missing: bash scripts/provision.sh test installs Gemini CLI from npm`);
  bucket = await freshBucket("gemini");
  await sdkClient().send(
    new PutObjectCommand({ Bucket: bucket, Key: "a.txt", Body: "hello gemini", ContentType: "text/plain" }),
  );
}, 60_000);

/** A throwaway HOME whose settings use an API key and know the server as "s3". */
function geminiHome(storeEnv: Record<string, string>): string {
  const home = tempDir("gemini-home");
  mkdirSync(join(home, ".gemini"));
  writeFileSync(
    join(home, ".gemini", "settings.json"),
    JSON.stringify({
      security: { auth: { selectedType: "gemini-api-key" } },
      mcpServers: { s3: { command: requireBinary(), args: [], env: storeEnv } },
    }),
  );
  return home;
}

async function gemini(
  home: string,
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([NODE22, GEMINI, ...args], {
    cwd: home,
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, GEMINI_API_KEY: "stand-in-key", ...extra },
  });
  const timer = setTimeout(() => proc.kill(), 90_000);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { code, out, err };
}

test("gemini mcp list: connected in a trusted folder, disabled in an untrusted one (the README says so)", async () => {
  const home = geminiHome(s3Env());
  // It prints the list on stderr or stdout depending on the version: read both.
  const printed = async (extra: Record<string, string> = {}) =>
    ((r) => r.out + r.err)(await gemini(home, ["mcp", "list"], extra));
  expect(await printed({ GEMINI_CLI_TRUST_WORKSPACE: "true" })).toMatch(/✓ s3: .* - Connected/);
  expect(await printed()).toMatch(/s3: .* - Disabled/);
}, 120_000);

test("gemini -p: a call with Gemini CLI's wait_for_previous works, and the model is told what was ignored", async () => {
  const api = startStandInGemini({
    name: "mcp_s3_get_object",
    args: { bucket_name: bucket, object_key: "a.txt", wait_for_previous: true },
  });
  try {
    const r = await gemini(geminiHome(s3Env()), ["-p", "Read a.txt", "--yolo", "-m", "gemini-2.5-flash"], {
      GOOGLE_GEMINI_BASE_URL: api.url,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    });
    expect(r.code, r.err.slice(-2000)).toBe(0);
    expect(api.responses.length, r.err.slice(-2000)).toBe(1);
    const seen = JSON.stringify(api.responses[0]!.response);
    expect(seen).toContain("hello gemini");
    expect(seen).toContain('Ignored parameter(s) get_object does not take: \\"wait_for_previous\\"');
    expect(seen).not.toMatch(/Unrecognized|isError|InvalidParameter/);
  } finally {
    api.stop();
  }
}, 120_000);

test("a store that is down when Gemini CLI starts does not take the tools away: they are declared, and their errors reach the model", async () => {
  const api = startStandInGemini({ name: "mcp_s3_list_buckets", args: {} });
  try {
    const down = { ...s3Env(), STORE_ENDPOINT_URL: "http://127.0.0.1:9" };
    const r = await gemini(geminiHome(down), ["-p", "List my buckets", "--yolo", "-m", "gemini-2.5-flash"], {
      GOOGLE_GEMINI_BASE_URL: api.url,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    });
    expect(r.code, r.err.slice(-2000)).toBe(0);
    for (const tool of ["list_buckets", "list_objects", "get_object"])
      expect(api.declared.has(`mcp_s3_${tool}`), tool).toBe(true);
    expect(JSON.stringify(api.responses)).toContain("ECONNREFUSED");
  } finally {
    api.stop();
  }
}, 120_000);
