/**
 * The official Python SDK (`mcp` 2.3.0, what Python agent frameworks build
 * on), in a venv provision.sh makes, against the compiled binary over stdio
 * and over Streamable HTTP: its ClientSession negotiates the 2025 handshake,
 * its Client speaks 2026-07-28 (probing, or pinned) or the handshake, and
 * what such frameworks send (an argument of their own, every optional
 * parameter filled in with a neutral value) works; a binary read carries no
 * base64 and says how to get the bytes; a page says how to continue.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { type HttpBinary, startHttpBinary } from "../helpers/http.ts";
import { requireBinary } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

const PYTHON = resolve(import.meta.dir, "../../.tools/py-mcp/bin/python");
const DRIVER = resolve(import.meta.dir, "../clients/python_sdk.py");
const TOKEN = "python-sdk-test-token-0123456789";
let bucket: string;
let http: HttpBinary;

beforeAll(async () => {
  if (!existsSync(PYTHON))
    throw new Error(`${PYTHON} is missing: bash scripts/provision.sh test makes the venv with the Python SDK`);
  bucket = await freshBucket("pysdk");
  const put = (Key: string, Body: string | Uint8Array, ContentType: string) =>
    sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body, ContentType }));
  await put("notes.txt", "hello python", "text/plain");
  await put("blob.bin", Uint8Array.from([0, 1, 2, 3, 255, 254]), "application/octet-stream");
  http = await startHttpBinary({ env: { ...s3Env(), STORE_HTTP_TOKENS: `py:${TOKEN}` } });
}, 60_000);
afterAll(async () => {
  await http.stop();
});

test("the Python SDK over stdio and Streamable HTTP: every call a framework would make works, and says what it should", async () => {
  const proc = Bun.spawn(
    [PYTHON, DRIVER, JSON.stringify({ binary: requireBinary(), env: s3Env(), bucket, url: http.url, token: TOKEN })],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect(code, err.slice(-3000)).toBe(0);
  const runs = JSON.parse(out);
  for (const transport of ["stdio", "http"] as const) {
    const r = runs[transport];
    expect(r.protocol, transport).toBe("2025-11-25");
    expect(r.tools, transport).toContain("get_object");
    for (const name of ["text", "binary", "unknown", "filled", "page"])
      expect(r[name].isError, `${transport} ${name}: ${JSON.stringify(r[name]).slice(0, 300)}`).toBe(false);
    expect(r.text.structuredContent.text).toBe("hello python");
    expect(r.filled.structuredContent.text).toBe("hello python");
    expect(r.unknown.structuredContent.ignored_parameters).toEqual(["wait_for_previous"]);
    expect(JSON.stringify(r.binary)).not.toContain("AAECA//+");
    expect(r.binary.structuredContent.next).toContain("include_binary: true");
    expect(r.page.structuredContent.next).toContain("continuation_token");
  }
  // The high-level Client: auto and a pinned 2026-07-28 speak 2026-07-28, legacy the handshake; the same tools and answers.
  for (const transport of ["stdio", "http"] as const) {
    for (const mode of ["auto", "legacy", "2026-07-28"] as const) {
      const r = runs[`${transport}-${mode}`];
      expect(r.protocol, `${transport} ${mode}`).toBe(mode === "legacy" ? "2025-11-25" : "2026-07-28");
      expect(r.tools, `${transport} ${mode}`).toEqual(runs[transport].tools);
      expect(r.text.structuredContent.text, `${transport} ${mode}`).toBe("hello python");
      expect(r.unknown.structuredContent.ignored_parameters).toEqual(["wait_for_previous"]);
    }
  }
}, 120_000);
