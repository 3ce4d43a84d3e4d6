/**
 * The audit log through the compiled binary: one JSON line per tool call and
 * resource read with who, what, where, how it ended, bytes and time; no
 * content, secret or token; a key cannot forge a line; in remote mode each
 * caller is named and SIGHUP reopens the file after a rotation (the server
 * keeps serving); a log that cannot be opened stops the start.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/files.ts";
import { connectHttp, type HttpBinary, rpc, startHttpBinary } from "../helpers/http.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { INITIALIZE, INITIALIZED, rawSession, runBinary } from "../helpers/raw-stdio.ts";
import { freshBucket, s3, s3Env } from "../helpers/s3.ts";

const CONTENT = "TOP-SECRET-CONTENT-of-the-object";
const EVIL_KEY = 'evil\n{"caller":"root","action":"delete_bucket","outcome":"ok"}\u2028x';

function lines(file: string): Record<string, any>[] {
  const text = readFileSync(file, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line));
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
    server = await startHttpBinary({
      env: { ...s3Env(), STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}`, STORE_AUDIT_LOG: file },
    });
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
      ["label:alice", "put_object", "a.txt", "ok"],
      ["label:bob", "head_object", "a.txt", "ok"],
    ]);
    const text = readFileSync(file, "utf8");
    for (const secret of [ALICE, BOB, s3().secretAccessKey]) expect(text).not.toContain(secret);
  });

  test("a call refused before it reached a tool (one the policy does not give) still gets its line", async () => {
    const dir = tempDir("audit-policy");
    const policy = join(dir, "policy.yaml");
    writeFileSync(
      policy,
      `rules:\n  - who: ["label:alice"]\n    access: read\n    buckets: ["*"]\n    prefixes: [""]\n    tools: ["*"]\n`,
    );
    const other = join(dir, "audit.jsonl");
    const guarded = await startHttpBinary({
      env: { ...s3Env(), STORE_HTTP_TOKENS: `alice:${ALICE}`, STORE_AUDIT_LOG: other },
      args: ["--policy", policy],
    });
    try {
      const alice = await connectHttp(guarded.url, ALICE);
      const r = await call(alice, "put_object", { bucket_name: bucket, object_key: "nope.txt", content: "x" });
      expect(r.isError).toBe(true);
      await alice.close();
    } finally {
      await guarded.stop();
    }
    expect(lines(other).map((l) => [l.caller, l.action, l.bucket, l.key, l.outcome])).toEqual([
      ["label:alice", "put_object", bucket, "nope.txt", "PolicyDenied"],
    ]);
  });

  test("arguments the tool's schema refuses get an InvalidParams line; a tool's own error is not taken for one", async () => {
    const other = join(tempDir("audit-invalid"), "audit.jsonl");
    const plain = await startHttpBinary({
      env: { ...s3Env(), STORE_HTTP_TOKENS: `alice:${ALICE}`, STORE_AUDIT_LOG: other },
    });
    try {
      const alice = await connectHttp(plain.url, ALICE);
      expect((await call(alice, "head_object", { bucket_name: bucket, object_key: 42 })).isError).toBe(true);
      expect((await call(alice, "head_object", { bucket_name: bucket, object_key: "missing.txt" })).isError).toBe(true);
      await alice.close();
    } finally {
      await plain.stop();
    }
    expect(lines(other).map((l) => [l.action, l.outcome])).toEqual([
      ["head_object", "InvalidParams"],
      ["head_object", "NotFound"],
    ]);
  });

  test("SIGHUP after a rotation: the server keeps serving and writes to a new file", async () => {
    renameSync(file, `${file}.1`);
    server.proc.kill("SIGHUP");
    const deadline = Date.now() + 5_000;
    while (!server.stderr().includes("audit log reopened") && Date.now() < deadline) await Bun.sleep(20);
    const alice = await connectHttp(server.url, ALICE);
    await call(alice, "list_objects", { bucket_name: bucket });
    await alice.close();
    expect(lines(file).map((l) => [l.caller, l.action])).toEqual([["label:alice", "list_objects"]]);
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

describe("bounded lines, and an audit that must be written", () => {
  test("three requests with huge names and ids write three short lines, each field cut with its mark", async () => {
    const file = join(tempDir("audit-bounded"), "audit.jsonl");
    const huge = (ch: string, n: number) => ch.repeat(n);
    const calls = [
      {
        jsonrpc: "2.0",
        id: huge("i", 1_000_000),
        method: "tools/call",
        params: {
          name: "delete_object",
          arguments: { bucket_name: huge("b", 1_000_000), object_key: huge("k", 2_000_000) },
        },
      },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: huge("t", 500_000), arguments: { prefix: huge("\u0001", 1_000_000) } },
      },
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: {
          name: "list_objects",
          arguments: {
            bucket_name: huge("é", 300_000),
            source_bucket: huge("s", 900_000),
            source_prefix: huge("\u0002", 900_000),
          },
        },
      },
    ];
    const run = await rawSession(["--audit-log", file], s3Env(), [INITIALIZE, INITIALIZED, ...calls], 60_000);
    expect(run.exitCode).toBe(0);
    const text = readFileSync(file, "utf8");
    const got = text.trimEnd().split("\n");
    expect(got).toHaveLength(3);
    for (const line of got) expect(Buffer.byteLength(line, "utf8")).toBeLessThanOrEqual(8 * 1024);
    const [first, second, third] = got.map((l) => JSON.parse(l));
    expect(first.bucket).toMatch(/^b{255}…\(\+999745 bytes\)$/);
    expect(first.key).toMatch(/^k{1024}…\(\+1998976 bytes\)$/);
    expect(first.request_id).toMatch(/^i{128}…\(\+999872 bytes\)$/);
    expect(second.action).toContain("…(+");
    expect(third.bucket).toMatch(/^é+…\(\+\d+ bytes\)$/);
    expect(Buffer.byteLength(third.bucket.split("…")[0], "utf8")).toBeLessThanOrEqual(255);
  }, 90_000);

  describe("on a full disk", () => {
    const mount = join(tempDir("audit-tmpfs"), "small");
    beforeAll(() => {
      mkdirSync(mount);
      const out = spawnSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", mount]);
      if (out.status !== 0)
        throw new Error(`cannot mount a small tmpfs for the full-audit test (run as root): ${out.stderr}`);
    });
    afterAll(() => {
      spawnSync("umount", [mount]);
    });

    test("--audit-required refuses calls while the log cannot be written, and serves again once it can; without it calls go on", async () => {
      const file = join(mount, "audit.jsonl");
      const required = await connectBinary({
        env: { ...s3Env(), STORE_AUDIT_REQUIRED: "true" },
        args: ["--audit-log", file],
      });
      const lax = await connectBinary({ env: s3Env(), args: ["--audit-log", join(mount, "lax.jsonl")] });
      try {
        // Fill the disk to the last page while both logs are still empty (a line fits in a page the log already has).
        spawnSync("dd", ["if=/dev/zero", `of=${join(mount, "filler")}`, "bs=4096"]);
        const first = await call(required.client, "list_buckets", {});
        expect(first.isError).toBeFalsy(); // it ran; its own line is what could not be written
        const refused = await call(required.client, "list_buckets", {});
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain("AuditUnavailable");
        await expect(required.client.readResource({ uri: "s3://some-bucket/some-key" })).rejects.toThrow(
          /AuditUnavailable/,
        );
        expect((await call(lax.client, "list_buckets", {})).isError).toBeFalsy();
        rmSync(join(mount, "filler"));
        // The next refused call's line is written: from then on calls run.
        let ok = false;
        for (let i = 0; i < 3 && !ok; i++) ok = !(await call(required.client, "list_buckets", {})).isError;
        expect(ok).toBe(true);
      } finally {
        await required.close();
        await lax.close();
      }
      expect(readFileSync(file, "utf8")).toContain('"outcome":"AuditUnavailable"');
    }, 60_000);
  });

  test("--audit-required without a log file stops the start", () => {
    const out = runBinary(["--audit-required"], s3Env());
    expect(out.exitCode).toBe(1);
    expect(out.stderr).toContain("give an audit log file");
  });

  test("refused calls count against the caller's limits", async () => {
    const dir = tempDir("audit-limits");
    const policy = join(dir, "policy.yaml");
    writeFileSync(
      policy,
      `rules:\n  - who: ["label:alice"]\n    access: read\n    buckets: ["*"]\n    prefixes: [""]\n    tools: [list_buckets]\n`,
    );
    const TOKEN = "alice-limits-token-0123456789";
    const limited = await startHttpBinary({
      env: {
        ...s3Env(),
        STORE_HTTP_TOKENS: `alice:${TOKEN}`,
        STORE_AUDIT_LOG: join(dir, "audit.jsonl"),
        STORE_CALLER_RATE: "2",
        STORE_CALLER_BURST: "3",
      },
      args: ["--policy", policy],
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await rpc(
          limited.url,
          {
            jsonrpc: "2.0",
            id: i,
            method: "tools/call",
            params: { name: "put_object", arguments: { bucket_name: "b", object_key: "x".repeat(5000), content: "x" } },
          },
          { authorization: `Bearer ${TOKEN}` },
        );
        statuses.push(res.status);
      }
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(4);
      const logged = lines(join(dir, "audit.jsonl"));
      expect(logged.length).toBeLessThanOrEqual(4);
      for (const l of logged) expect(l.key).toContain("…(+3976 bytes)");
    } finally {
      await limited.stop();
    }
  });
});
