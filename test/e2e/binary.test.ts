/** The compiled binary as a client starts it: CLI behaviour, protocol, stdout purity, secrets. */

import { describe, expect, test } from "bun:test";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import pkg from "../../package.json" with { type: "json" };
import { call, connectBinary } from "../helpers/mcp.ts";
import { INITIALIZE, INITIALIZED, rawSession, runBinary } from "../helpers/raw-stdio.ts";
import { s3Env, sdkClient, uniqueBucket } from "../helpers/s3.ts";

const SPEC_OPTIONS = ["--access-key-id", "--secret-access-key", "--region", "--endpoint-url", "--log-level"];

describe("command line", () => {
  test("--help exits 0 and lists every option", () => {
    const { stdout, exitCode } = runBinary(["--help"]);
    expect(exitCode).toBe(0);
    for (const option of [
      ...SPEC_OPTIONS,
      "--session-token",
      "--allowed-dir",
      "--read-only",
      "--bucket",
      "--help",
      "--version",
    ]) {
      expect(stdout).toContain(option);
    }
  });

  test("--version prints the package version", () => {
    const { stdout, exitCode } = runBinary(["--version"]);
    expect(exitCode).toBe(0);
    expect(stdout.trim()).toBe(pkg.version);
  });

  test("a bad configuration exits 1, names every problem on stderr, prints nothing on stdout", () => {
    const { stdout, stderr, exitCode } = runBinary([
      "--endpoint-url",
      "not a url",
      "--log-level",
      "loud",
      "--access-key-id",
      "AKIAONLYHALF",
    ]);
    expect(exitCode).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("3 problem(s)");
    expect(stderr).toContain("endpoint URL");
    expect(stderr).toContain("log level");
    expect(stderr).toContain("secret access key");
  });

  test("an unknown option is a configuration error", () => {
    const { stdout, stderr, exitCode } = runBinary(["--endpoint", "http://x"]);
    expect(exitCode).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain('unknown option "--endpoint"');
  });

  test("a secret on the command line works and warns on stderr", async () => {
    const env = s3Env();
    const run = await rawSession(
      [
        "--access-key-id",
        env.STORE_ACCESS_KEY_ID!,
        "--secret-access-key",
        env.STORE_SECRET_ACCESS_KEY!,
        "--endpoint-url",
        env.STORE_ENDPOINT_URL!,
      ],
      {},
      [
        INITIALIZE,
        INITIALIZED,
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_buckets", arguments: {} } },
      ],
    );
    expect(run.stderr).toContain("process list");
    const answer = JSON.parse(run.stdoutLines.find((l) => l.includes('"id":2'))!);
    expect(answer.result.isError).toBeUndefined();
    expect(run.stderr).not.toContain(env.STORE_SECRET_ACCESS_KEY!);
  });
});

describe("over stdio against Ceph RGW", () => {
  test("initialize, the default tools (no delete tools without --allow-delete), list_buckets shows a bucket made through the SDK", async () => {
    const bucket = uniqueBucket("e2e-list");
    await sdkClient().send(new CreateBucketCommand({ Bucket: bucket }));
    const { client, close } = await connectBinary({ env: s3Env() });
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "store-mcp-server", version: pkg.version });
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(tools).toEqual([
        "cancel_job",
        "copy_object",
        "copy_prefix",
        "create_bucket",
        "delete_bucket",
        "download_prefix",
        "find_objects",
        "get_bucket_settings",
        "get_object",
        "get_object_tags",
        "head_object",
        "inspect_object",
        "job_status",
        "list_buckets",
        "list_jobs",
        "list_object_versions",
        "list_objects",
        "presign_url",
        "put_object",
        "query_objects",
        "search_objects",
        "storage_usage",
        "upload_directory",
        "upload_file",
      ]);
      const result = await call(client, "list_buckets");
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent!.buckets.map((b: { name: string }) => b.name)).toContain(bucket);
    } finally {
      await close();
    }
  });

  test("the default log level logs at info; stdin closing ends the process with 0", async () => {
    const run = await rawSession([], s3Env(), [INITIALIZE, INITIALIZED]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain("[info]");
    expect(run.stderr).toContain("ready on stdio");
  });

  test("at debug, every stdout line is JSON-RPC and the secret appears nowhere, even on failures", async () => {
    const env = s3Env();
    const secret = "wrong-secret-but-still-secret-0123456789";
    const messages = [
      INITIALIZE,
      INITIALIZED,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_buckets", arguments: {} } },
      {
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name: "get_object", arguments: { bucket_name: "nope", object_key: "k" } },
      },
    ];
    const good = await rawSession(["--log-level", "debug"], env, messages);
    const bad = await rawSession(["--log-level", "debug"], { ...env, STORE_SECRET_ACCESS_KEY: secret }, messages);
    for (const run of [good, bad]) {
      expect(run.stdoutLines.length).toBeGreaterThanOrEqual(4);
      for (const line of run.stdoutLines) {
        const msg = JSON.parse(line);
        expect(msg.jsonrpc).toBe("2.0");
      }
      expect(run.stderr).toContain("[debug]");
    }
    expect(good.stderr + good.stdoutLines.join("\n")).not.toContain(env.STORE_SECRET_ACCESS_KEY!);
    expect(bad.stderr + bad.stdoutLines.join("\n")).not.toContain(secret);
    // The wrong secret is reported as what it is.
    expect(bad.stdoutLines.find((l) => l.includes('"id":3'))).toContain("SignatureDoesNotMatch");
    // The key id shows at most its last four characters.
    expect(good.stderr).not.toContain(env.STORE_ACCESS_KEY_ID!);
    expect(good.stderr).toContain(env.STORE_ACCESS_KEY_ID!.slice(-4));
  });

  test("an unreachable endpoint gives an error in seconds, not a hang", async () => {
    const started = Date.now();
    const run = await rawSession([], { ...s3Env(), STORE_ENDPOINT_URL: "http://127.0.0.1:9" }, [
      INITIALIZE,
      INITIALIZED,
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_buckets", arguments: {} } },
    ]);
    const answer = JSON.parse(run.stdoutLines.find((l) => l.includes('"id":2'))!);
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0].text).toContain("ECONNREFUSED");
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
