/** A client no one here wrote: the official MCP Inspector, in CLI mode, against the compiled binary. */

import { beforeAll, expect, test } from "bun:test";
import { join, resolve } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { tempDir } from "../helpers/files.ts";
import { requireBinary } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

const INSPECTOR = resolve(import.meta.dir, "../../node_modules/.bin/mcp-inspector");
let bucket: string;

beforeAll(async () => {
  bucket = await freshBucket("inspector");
  await sdkClient().send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: "notes/hello.txt",
      Body: "Hello from the Inspector test.\n",
      ContentType: "text/plain",
    }),
  );
}, 60_000);

/** Runs `mcp-inspector --cli … <binary>` and returns its parsed JSON output. */
function inspector(args: string[], serverEnv: Record<string, string> = {}): any {
  const out = runInspector(args, serverEnv);
  if (out.exitCode !== 0) throw new Error(`inspector exited ${out.exitCode}: ${out.stderr}\n${out.stdout}`);
  return JSON.parse(out.stdout);
}

function runInspector(
  args: string[],
  serverEnv: Record<string, string> = {},
): { exitCode: number; stdout: string; stderr: string } {
  const home = tempDir("inspector-home");
  const env = Object.entries({ ...s3Env(), ...serverEnv }).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  // The target goes first: --tool-arg takes every value after it.
  const out = Bun.spawnSync([INSPECTOR, "--cli", requireBinary(), ...env, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH ?? "", HOME: home, MCP_CATALOG_PATH: join(home, "mcp.json") },
    timeout: 60_000,
  });
  return { exitCode: out.exitCode ?? -1, stdout: out.stdout.toString(), stderr: out.stderr.toString().slice(-2000) };
}

test("the Inspector lists our tools (the six of the spec and the toolkit) with their input schemas", () => {
  const listed = inspector(["--method", "tools/list"]);
  const names = listed.tools.map((t: { name: string }) => t.name).sort();
  expect(names).toEqual([
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
  const getObject = listed.tools.find((t: { name: string }) => t.name === "get_object");
  expect(getObject.inputSchema.required).toEqual(["bucket_name", "object_key"]);
}, 60_000);

test("the Inspector calls list_buckets and sees the test bucket", () => {
  const result = inspector(["--method", "tools/call", "--tool-name", "list_buckets"]);
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent.buckets.map((b: { name: string }) => b.name)).toContain(bucket);
}, 60_000);

test("the Inspector calls get_object and reads the object's text", () => {
  const result = inspector([
    "--method",
    "tools/call",
    "--tool-name",
    "get_object",
    "--tool-arg",
    `bucket_name=${bucket}`,
    "object_key=notes/hello.txt",
  ]);
  expect(result.isError).toBeFalsy();
  expect(result.content[0].text).toContain("Hello from the Inspector test.");
  expect(result.structuredContent.content_type).toBe("text/plain");
}, 60_000);

test("the Inspector sees the object template, lists resources and reads one", () => {
  const templates = inspector(["--method", "resources/templates/list"]);
  // Objects, and the skills' files (the prompts' recipes as skills: mcp/skills.ts).
  expect(templates.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate)).toEqual([
    "s3://{bucket}/{+key}",
    "skill://{+path}",
  ]);
  // Limited to the test's bucket: resources/list shows the first few buckets only.
  const listed = inspector(["--method", "resources/list"], { STORE_BUCKETS: bucket });
  expect(listed.resources.map((r: { uri: string }) => r.uri)).toContain(`s3://${bucket}/notes/hello.txt`);
  const read = inspector(["--method", "resources/read", "--uri", `s3://${bucket}/notes/hello.txt`]);
  expect(read.contents[0].text).toBe("Hello from the Inspector test.\n");
  expect(read.contents[0].mimeType).toBe("text/plain");
}, 60_000);

test("the Inspector's MCP Apps probe (--app-info): list_buckets and list_objects carry the object browser, with its MIME type and CSP; others none", () => {
  const lines = runInspector(["--method", "tools/list", "--app-info", "--advertise-apps"]);
  expect(lines.exitCode, lines.stderr).toBe(0);
  const infos = lines.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const withApp = infos.filter((i) => i.hasApp);
  expect(withApp.map((i) => i.toolName).sort()).toEqual(["list_buckets", "list_objects"]);
  for (const info of withApp) {
    expect(info.resourceUri).toBe("ui://store-mcp-server/object-browser.html");
    expect(info.resourceMimeType).toBe("text/html;profile=mcp-app");
    expect(info.resourceError).toBeUndefined();
    expect(info.csp.resourceDomains).toContain(new URL(s3Env().STORE_ENDPOINT_URL!).origin);
  }
  // A tool without a view: the probe says so with exit code 2.
  const none = runInspector(["--method", "tools/call", "--tool-name", "get_object", "--app-info"]);
  expect(none.exitCode).toBe(2);
  expect(JSON.parse(none.stdout.trim())).toMatchObject({ hasApp: false, toolName: "get_object" });
}, 60_000);
