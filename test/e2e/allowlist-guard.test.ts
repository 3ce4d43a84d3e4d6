/**
 * The operator's bucket allowlist as a structure, every tool at once,
 * through the compiled binary: a call naming a bucket outside --bucket (a
 * copy's source too), or a key with a ".." segment, is refused with the
 * allowlist's code, with no request reaching the store (a recording proxy)
 * and no question asked of the user (a client that answers elicitation and
 * counts). The tools are every tool whose schema names a bucket or a key
 * (the cards say which, from the shared fragments): a new one is in this
 * table without anyone adding it, and one whose arguments do not use the
 * fragments fails the coverage check.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ALL_CARDS } from "../../src/tool-registry/cards.ts";
import { tempDir } from "../helpers/files.ts";
import { requireBinary, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env } from "../helpers/s3.ts";

const OUTSIDE = "not-on-the-list";
let allowed: string;
let dir: string;
let client: Client;
let proxy: ReturnType<typeof startRecordingProxy>;
let asked = 0;

/** Arguments that pass each tool's schema, with `bucket` where it names a bucket (and `source` for a copy's source). */
function argsFor(tool: string, bucket: string, source: string, key = "k.csv", prefix = ""): Record<string, unknown> {
  const b = { bucket_name: bucket };
  const o = { ...b, object_key: key };
  const table: Record<string, Record<string, unknown>> = {
    list_objects: b,
    get_object: o,
    upload_file: { ...o, local_file_path: "f.txt" },
    create_bucket: { bucket_name: bucket === OUTSIDE ? "not-on-the-list-either" : bucket },
    delete_bucket: b,
    head_object: o,
    put_object: { ...o, content: "x" },
    copy_object: { source_bucket: source, source_key: key, ...o },
    presign_url: o,
    list_object_versions: b,
    delete_object: o,
    delete_objects: { ...b, keys: [key], confirm: true },
    upload_directory: { ...b, prefix: `${prefix}up/`, local_dir: "." },
    download_prefix: { ...b, prefix: `${prefix}down/`, local_dir: "out" },
    copy_prefix: { source_bucket: source, source_prefix: `${prefix}a/`, bucket_name: bucket, prefix: "b/" },
    storage_usage: b,
    find_objects: b,
    search_objects: { ...b, prefix: "", pattern: "x" },
    inspect_object: o,
    query_objects: { ...b, keys: [key], sql: "SELECT 1" },
    get_bucket_settings: b,
    get_object_tags: o,
    put_object_tags: { ...o, tags: { team: "a" }, confirm: true },
    set_bucket_versioning: { ...b, status: "Enabled", confirm: true },
    set_bucket_lifecycle: { ...b, rules: [], confirm: true },
    set_bucket_cors: { ...b, rules: [], confirm: true },
    set_bucket_policy: { ...b, policy: JSON.stringify({ Version: "2012-10-17", Statement: [] }), confirm: true },
    delete_bucket_policy: { ...b, confirm: true },
    set_object_lock: { ...o, legal_hold: "ON", confirm: true },
    restore_object: { ...o, days: 1, confirm: true },
  };
  const args = table[tool];
  if (!args) throw new Error(`no arguments for ${tool}: add it to this table`);
  return args;
}

beforeAll(async () => {
  allowed = await freshBucket("guarded");
  dir = tempDir("allowlist-guard");
  writeFileSync(join(dir, "f.txt"), "f");
  mkdirSync(join(dir, "out"));
  proxy = startRecordingProxy(s3().endpoint);
  client = new Client({ name: "allowlist-guard", version: "1" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(
    ElicitRequestSchema,
    async () => (asked++, { action: "accept", content: { confirm: true } }),
  );
  await client.connect(
    new StdioClientTransport({
      command: requireBinary(),
      args: ["--bucket", allowed, "--allow-delete", "--allow-admin", "--allowed-dir", dir],
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? "/root",
        ...s3Env(),
        STORE_ENDPOINT_URL: proxy.endpoint,
        STORE_CALL_BUDGET_SECONDS: "0",
      },
      cwd: dir,
      stderr: "ignore",
    }),
  );
}, 60_000);
afterAll(async () => {
  await client?.close();
  proxy?.stop();
});

const guarded = ALL_CARDS.filter((c) => c.addresses);

test("the cards name every tool with a bucket_name, and where a copy's source is", () => {
  const listed = ALL_CARDS.filter((c) => !c.aboutJobs && !c.storeless && c.name !== "list_buckets").map((c) => c.name);
  expect(guarded.map((c) => c.name).sort()).toEqual(listed.sort());
  for (const c of guarded.filter((c) => c.sourceStore)) expect(c.addresses!.sourceBucket).toEqual(["source_bucket"]);
});

for (const card of guarded) {
  // The allowed bucket is made once the suite starts: the arguments are built when each test runs.
  const variants: [string, () => Record<string, unknown>, string][] = [
    ["a bucket outside --bucket", () => argsFor(card.name, OUTSIDE, OUTSIDE), "BucketNotAllowed"],
  ];
  if (card.addresses!.sourceBucket.length > 0)
    variants.push(["a source bucket outside --bucket", () => argsFor(card.name, allowed, OUTSIDE), "BucketNotAllowed"]);
  if (card.addresses!.key.length + card.addresses!.sourceKey.length > 0)
    variants.push([
      "a key or prefix with a '..' segment",
      () => argsFor(card.name, allowed, allowed, "a/../../elsewhere/k.csv", "x/../../"),
      "UnsafeKey",
    ]);
  for (const [what, args, code] of variants) {
    test(`${card.name}: ${what} is refused (${code}) before any request or question`, async () => {
      const given = args();
      const before = proxy.requests.length;
      const askedBefore = asked;
      const r = (await client.callTool({ name: card.name, arguments: given })) as {
        isError?: boolean;
        content: { type: string; text?: string }[];
      };
      expect(r.isError, textOf(r as never)).toBe(true);
      expect(textOf(r as never)).toContain(code);
      expect(proxy.requests.length - before).toBe(0);
      expect(asked - askedBefore).toBe(0);
    });
  }
}
