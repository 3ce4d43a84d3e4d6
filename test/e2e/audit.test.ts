/**
 * The audit log through the compiled binary: one JSON line per tool call and
 * resource read with who, what, where, how it ended, bytes and time; no
 * content, secret or token; a key cannot forge a line; in remote mode each
 * caller is named and SIGHUP reopens the file after a rotation (the server
 * keeps serving); a log that cannot be opened stops the start.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/files.ts";
import { connectHttp, startHttpBinary, type HttpBinary } from "../helpers/http.ts";
import { call, connectBinary } from "../helpers/mcp.ts";
import { runBinary } from "../helpers/raw-stdio.ts";
import { freshBucket, s3, s3Env } from "../helpers/s3.ts";

const CONTENT = "TOP-SECRET-CONTENT-of-the-object";
const EVIL_KEY = 'evil\n{"caller":"root","action":"delete_bucket","outcome":"ok"}\u2028x';

function lines(file: string): Record<string, any>[] {
  const text = readFileSync(file, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text.trimEnd().split("\n").map((line) => JSON.parse(line));
}

describe("audit log, stdio", () => {
  let bucket: string;
  let file: string;
  beforeAll(async () => {
    bucket = await freshBucket("audit");
    file = join(tempDir("audit"), "audit.jsonl");
    const session = await connectBinary({ env: s3Env(), args: ["--audit-log", file] });
    try {
      await call(session.client, "put_object", { bucket_name: bucket, object_key: "notes/a.txt", content: CONTENT });
      await call(session.client, "put_object", { bucket_name: bucket, object_key: EVIL_KEY, content: "x" });
      await call(session.client, "get_object", { bucket_name: bucket, object_key: "notes/a.txt" });
      await call(session.client, "list_objects", { bucket_name: bucket, prefix: "notes/" });
      await call(session.client, "get_object", { bucket_name: bucket, object_key: "missing.txt" });
      await session.client.readResource({ uri: `s3://${bucket}/notes/a.txt` });
      await session.client.readResource({ uri: `s3://${bucket}/nothing-here` }).catch(() => undefined);
      await session.client.readResource({ uri: "ui://store-mcp-server/object-browser.html" });
      // Not offered without --allow-delete: the SDK answers, the log still has it.
      await call(session.client, "delete_object", { bucket_name: bucket, object_key: "notes/a.txt" });
    } finally {
      await session.close();
    }
  });

  test("one line per call and read, in order, each saying who, what, where, how it ended, bytes and time", () => {
    const got = lines(file);
    expect(got.map((l) => [l.caller, l.action, l.bucket, l.key ?? null, l.prefix ?? null, l.outcome])).toEqual([
      ["local", "put_object", bucket, "notes/a.txt", null, "ok"],
      ["local", "put_object", bucket, EVIL_KEY, null, "ok"],
      ["local", "get_object", bucket, "notes/a.txt", null, "ok"],
      ["local", "list_objects", bucket, null, "notes/", "ok"],
      ["local", "get_object", bucket, "missing.txt", null, "NoSuchKey"],
      ["local", "resources/read", bucket, "notes/a.txt", null, "ok"],
      ["local", "resources/read", bucket, "nothing-here", null, "NoSuchKey"],
      ["local", "resources/read", undefined, null, null, "ok"],
      ["local", "delete_object", bucket, "notes/a.txt", null, "UnknownTool"],
    ]);
    expect(got[0]!.bytes).toBe(CONTENT.length);
    expect(got[2]!.bytes).toBe(CONTENT.length);
    expect(got[5]!.bytes).toBe(CONTENT.length);
    // The object browser's page: named by its URI, not as an object.
    expect(got[7]).toMatchObject({ uri: "ui://store-mcp-server/object-browser.html" });
    for (const line of got) {
      expect(Number.isNaN(Date.parse(line.time))).toBe(false);
      expect(typeof line.duration_ms).toBe("number");
      expect(line.request_id).toBeDefined();
    }
  });

  test("no content, no secret; the key with a newline did not forge a line", () => {
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain(CONTENT);
    expect(text).not.toContain(s3().secretAccessKey);
    expect(text.trimEnd().split("\n")).toHaveLength(9);
    expect(lines(file).some((l) => l.action === "delete_bucket")).toBe(false);
  });
});

describe("audit log, remote", () => {
  const ALICE = "alice-audit-token-0123456789";
  const BOB = "bob-audit-token-9876543210ab";
  let server: HttpBinary;
  let file: string;
  let bucket: string;
  beforeAll(async () => {
    bucket = await freshBucket("audit-http");
    file = join(tempDir("audit-http"), "audit.jsonl");
    server = await startHttpBinary({ env: { ...s3Env(), STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}`, STORE_AUDIT_LOG: file } });
  });
  afterAll(() => server.stop());

  test("each caller is named by its token's label; tokens never appear", async () => {
    const alice = await connectHttp(server.url, ALICE);
    const bob = await connectHttp(server.url, BOB);
    await call(alice, "put_object", { bucket_name: bucket, object_key: "a.txt", content: "from alice" });
    await call(bob, "head_object", { bucket_name: bucket, object_key: "a.txt" });
    await Promise.all([alice.close(), bob.close()]);
    const got = lines(file);
    expect(got.map((l) => [l.caller, l.action, l.key, l.outcome])).toEqual([
      ["alice", "put_object", "a.txt", "ok"],
      ["bob", "head_object", "a.txt", "ok"],
    ]);
    const text = readFileSync(file, "utf8");
    for (const secret of [ALICE, BOB, s3().secretAccessKey]) expect(text).not.toContain(secret);
  });

  test("a call refused before it reached a tool (one the policy does not give) still gets its line", async () => {
    const dir = tempDir("audit-policy");
    const policy = join(dir, "policy.yaml");
    writeFileSync(policy, `rules:\n  - who: ["label:alice"]\n    access: read\n    buckets: ["*"]\n    prefixes: [""]\n    tools: ["*"]\n`);
    const other = join(dir, "audit.jsonl");
    const guarded = await startHttpBinary({ env: { ...s3Env(), STORE_HTTP_TOKENS: `alice:${ALICE}`, STORE_AUDIT_LOG: other }, args: ["--policy", policy] });
    try {
      const alice = await connectHttp(guarded.url, ALICE);
      const r = await call(alice, "put_object", { bucket_name: bucket, object_key: "nope.txt", content: "x" });
      expect(r.isError).toBe(true);
      await alice.close();
    } finally {
      await guarded.stop();
    }
    expect(lines(other).map((l) => [l.caller, l.action, l.bucket, l.key, l.outcome])).toEqual([["alice", "put_object", bucket, "nope.txt", "PolicyDenied"]]);
  });

  test("SIGHUP after a rotation: the server keeps serving and writes to a new file", async () => {
    renameSync(file, `${file}.1`);
    server.proc.kill("SIGHUP");
    const deadline = Date.now() + 5_000;
    while (!server.stderr().includes("audit log reopened") && Date.now() < deadline) await Bun.sleep(20);
    const alice = await connectHttp(server.url, ALICE);
    await call(alice, "list_objects", { bucket_name: bucket });
    await alice.close();
    expect(lines(file).map((l) => [l.caller, l.action])).toEqual([["alice", "list_objects"]]);
    expect(lines(`${file}.1`)).toHaveLength(2);
    expect(server.proc.exitCode).toBeNull();
  });
});

test("an audit log that cannot be opened stops the start, saying why", () => {
  const out = runBinary(["--audit-log", "/nonexistent-dir/audit.jsonl"], s3Env());
  expect(out.exitCode).toBe(1);
  expect(out.stderr).toContain("audit log /nonexistent-dir/audit.jsonl cannot be opened");
  expect(out.stdout).toBe("");
});
