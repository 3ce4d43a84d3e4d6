/** The tools/list contract: names, schemas and annotations, as a client sees them. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { advertisedAnnotations } from "../../src/tool-kit/annotations.ts";
import { cancelJob } from "../../src/tools/cancel-job.ts";
import { jobStatus } from "../../src/tools/job-status.ts";
import { connectInMemory } from "../helpers/in-memory.ts";

let client: Client;
beforeAll(async () => {
  client = await connectInMemory({ allowDelete: true, allowAdmin: true });
});
afterAll(() => client.close());

const SPEC_PARAMETERS: Record<string, string[]> = {
  list_buckets: [],
  list_objects: ["bucket_name", "prefix"],
  upload_file: ["local_file_path", "bucket_name", "object_key", "content_type", "storage_class", "cache_control"],
  get_object: ["bucket_name", "object_key", "version_id", "mode", "local_path", "max_content_size"],
  create_bucket: ["bucket_name"],
  delete_bucket: ["bucket_name"],
};
/** The object toolkit (issue #13): every tool with every parameter it names. */
const TOOLKIT_PARAMETERS: Record<string, string[]> = {
  head_object: ["bucket_name", "object_key", "version_id"],
  put_object: [
    "bucket_name",
    "object_key",
    "content",
    "encoding",
    "content_type",
    "cache_control",
    "storage_class",
    "metadata",
    "if_absent",
  ],
  copy_object: [
    "source_bucket",
    "source_key",
    "source_version_id",
    "bucket_name",
    "object_key",
    "metadata_directive",
    "content_type",
    "cache_control",
    "storage_class",
    "if_absent",
  ],
  delete_object: ["bucket_name", "object_key", "version_id"],
  delete_objects: ["bucket_name", "keys", "prefix", "dry_run", "confirm", "max_objects"],
  presign_url: [
    "bucket_name",
    "object_key",
    "method",
    "expires_in",
    "version_id",
    "content_type",
    "response_content_disposition",
  ],
  list_object_versions: ["bucket_name", "prefix", "max_keys", "key_marker", "version_id_marker"],
};
/** The bulk tools (issue #25), with the parameters the issue names. */
const BULK_PARAMETERS: Record<string, string[]> = {
  upload_directory: [
    "local_dir",
    "bucket_name",
    "prefix",
    "include",
    "exclude",
    "skip_unchanged",
    "delete_extraneous",
    "dry_run",
    "content_type",
    "cache_control",
    "storage_class",
    "max_objects",
  ],
  download_prefix: [
    "bucket_name",
    "prefix",
    "local_dir",
    "include",
    "exclude",
    "skip_unchanged",
    "overwrite",
    "delete_extraneous",
    "dry_run",
    "max_objects",
  ],
  copy_prefix: [
    "source_bucket",
    "source_prefix",
    "bucket_name",
    "prefix",
    "include",
    "exclude",
    "skip_unchanged",
    "move",
    "dry_run",
    "max_objects",
  ],
  storage_usage: ["bucket_name", "prefix", "depth", "top", "max_keys_scanned"],
  find_objects: [
    "bucket_name",
    "prefix",
    "glob",
    "min_size",
    "max_size",
    "modified_after",
    "modified_before",
    "storage_class",
    "max_results",
    "max_keys_scanned",
    "continuation_token",
  ],
};
/** Bucket settings and tags (issue #29). */
const SETTINGS_PARAMETERS: Record<string, string[]> = {
  get_bucket_settings: ["bucket_name"],
  get_object_tags: ["bucket_name", "object_key", "version_id"],
  put_object_tags: ["bucket_name", "object_key", "version_id", "tags", "mode", "confirm"],
  set_bucket_versioning: ["bucket_name", "status", "confirm"],
  set_bucket_lifecycle: ["bucket_name", "rules", "replace", "confirm"],
  set_bucket_cors: ["bucket_name", "rules", "confirm"],
  set_bucket_policy: ["bucket_name", "policy", "allow_public", "confirm"],
  delete_bucket_policy: ["bucket_name", "confirm"],
  // The rest of S3 (issue #58).
  set_object_lock: [
    "bucket_name",
    "object_key",
    "version_id",
    "mode",
    "retain_until",
    "days",
    "legal_hold",
    "bypass_governance",
    "confirm",
  ],
  restore_object: ["bucket_name", "object_key", "prefix", "days", "tier", "confirm"],
};
/** Looking inside objects (issue #47), with the parameters the issue names (get_object gains archive_member). */
const LOOK_PARAMETERS: Record<string, string[]> = {
  search_objects: [
    "bucket_name",
    "prefix",
    "pattern",
    "regex",
    "ignore_case",
    "include",
    "exclude",
    "max_matches",
    "context_lines",
    "max_object_bytes",
    "continuation_token",
  ],
  inspect_object: ["bucket_name", "object_key", "archive_member"],
  query_objects: ["bucket_name", "keys", "prefix", "include", "sql", "max_rows", "continuation_token"],
};
const REQUIRED: Record<string, string[]> = {
  search_objects: ["bucket_name", "pattern"],
  inspect_object: ["bucket_name", "object_key"],
  query_objects: ["bucket_name", "sql"],
  get_bucket_settings: ["bucket_name"],
  get_object_tags: ["bucket_name", "object_key"],
  put_object_tags: ["bucket_name", "object_key", "tags"],
  set_bucket_versioning: ["bucket_name", "status"],
  set_bucket_lifecycle: ["bucket_name", "rules"],
  set_bucket_cors: ["bucket_name", "rules"],
  set_bucket_policy: ["bucket_name", "policy"],
  delete_bucket_policy: ["bucket_name"],
  set_object_lock: ["bucket_name"],
  restore_object: ["bucket_name", "days"],
  upload_directory: ["local_dir", "bucket_name", "prefix"],
  download_prefix: ["bucket_name", "prefix", "local_dir"],
  copy_prefix: ["source_bucket", "source_prefix", "bucket_name", "prefix"],
  storage_usage: ["bucket_name"],
  find_objects: ["bucket_name"],
  head_object: ["bucket_name", "object_key"],
  put_object: ["bucket_name", "object_key", "content"],
  copy_object: ["source_bucket", "source_key", "bucket_name", "object_key"],
  delete_object: ["bucket_name", "object_key"],
  delete_objects: ["bucket_name"],
  presign_url: ["bucket_name", "object_key"],
  list_object_versions: ["bucket_name"],
  list_buckets: [],
  list_objects: ["bucket_name"],
  upload_file: ["local_file_path", "bucket_name", "object_key"],
  get_object: ["bucket_name", "object_key"],
  create_bucket: ["bucket_name"],
  delete_bucket: ["bucket_name"],
};

test("every tool of the spec is listed with the spec's parameters and required fields; the toolkit with its own", async () => {
  const { tools } = await client.listTools();
  const expected = {
    ...SPEC_PARAMETERS,
    ...TOOLKIT_PARAMETERS,
    ...BULK_PARAMETERS,
    ...SETTINGS_PARAMETERS,
    ...LOOK_PARAMETERS,
  };
  expect(Object.keys(tools.find((t) => t.name === "get_object")!.inputSchema.properties ?? {})).toContain(
    "archive_member",
  );
  expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(expected).sort());
  for (const tool of tools) {
    const props = Object.keys(tool.inputSchema.properties ?? {});
    for (const p of expected[tool.name]!) expect(props).toContain(p);
    expect((tool.inputSchema.required ?? []).sort()).toEqual(REQUIRED[tool.name]!.sort());
    // Unknown top-level parameters are ignored with a note in the result (protocol tests), so the schema does not claim they are refused.
    expect(tool.inputSchema.additionalProperties).toBe(
      Object.keys(tool.inputSchema.properties ?? {}).length === 0 ? false : undefined,
    );
  }
});

/** The MCP spec's defaults for hints a tool leaves out. */
const SPEC_DEFAULTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

test("every tool's annotations say what differs from the spec's defaults (destructiveHint always on a tool that changes something), no title (its name says it), and an output schema", async () => {
  const { tools } = await client.listTools();
  for (const tool of tools) {
    const hints = tool.annotations ?? {};
    // Only what the spec's defaults do not already say; a read-only tool's destructive/idempotent hints mean nothing.
    expect({
      tool: tool.name,
      readOnlyFalse: hints.readOnlyHint === false,
      openWorldTrue: hints.openWorldHint === true,
    }).toEqual({ tool: tool.name, readOnlyFalse: false, openWorldTrue: false });
    if (hints.readOnlyHint)
      expect({ tool: tool.name, destructive: hints.destructiveHint, idempotent: hints.idempotentHint }).toEqual({
        tool: tool.name,
        destructive: undefined,
        idempotent: undefined,
      });
    else
      expect({ tool: tool.name, destructive: typeof hints.destructiveHint }).toEqual({
        tool: tool.name,
        destructive: "boolean",
      });
    // A title is the name in words: left out of the list, whose every byte is each client's context.
    expect(tool.title ?? tool.annotations?.title).toBeUndefined();
    expect(tool.outputSchema?.type).toBe("object");
  }
  const by = Object.fromEntries(tools.map((t) => [t.name, { ...SPEC_DEFAULTS, ...t.annotations }]));
  expect(by.list_buckets!.readOnlyHint).toBe(true);
  expect(by.list_objects!.readOnlyHint).toBe(true);
  expect(by.get_object!.readOnlyHint).toBe(false);
  expect(by.upload_file!.destructiveHint).toBe(true);
  expect(by.delete_bucket!.destructiveHint).toBe(true);
  expect(by.create_bucket!).toMatchObject({
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: true,
  });
  // The job tools (offered where a call budget is set; not in this server) as advertised.
  expect(advertisedAnnotations(jobStatus.annotations)).toEqual({ readOnlyHint: true, openWorldHint: false });
  expect(advertisedAnnotations(cancelJob.annotations)).toEqual({
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  });
});

/** Fields whose name says it all, shared by most tools: left without a description to keep tools/list within 24 KB (issue #29). */
const SELF_DESCRIBING = new Set([
  "bucket_name",
  "object_key",
  "version_id",
  "source_bucket",
  "source_key",
  "source_version_id",
  "storage_class",
  "cache_control",
  "content_type",
  "job_id",
  "legal_hold",
  "sse",
  "sse_kms_key_id",
]);

test("every input field carries a description, but the few whose name says it all", async () => {
  const { tools } = await client.listTools();
  for (const tool of tools) {
    for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
      if (SELF_DESCRIBING.has(name)) continue;
      expect({ tool: tool.name, name, description: typeof (schema as { description?: unknown }).description }).toEqual({
        tool: tool.name,
        name,
        description: "string",
      });
    }
  }
});

// 13 tools took 19.3 KB, the bulk tools made it 35 KB; the settings tools came with output schemas advertised as {type: object} and tighter descriptions. --tools trims the list.
// "nullable" on optional parameters (smolagents, #42) cost 1.6 KB: the budget is the house issue's (#43), 28 KB with every tool.
// search_objects and inspect_object (#47): 24.0 → 26.2 KB.
// Task marks for clients that declare tasks (#69): 27 KiB with them, as the binary measures (tool-list-budget.test.ts).
test("tools/list with every tool enabled (31 tools) stays within 27 KiB of JSON", async () => {
  const listed = await client.listTools();
  expect(listed.tools).toHaveLength(31);
  expect(JSON.stringify(listed).length).toBeLessThanOrEqual(27 * 1024);
});

test("optional parameters, and only those, say nullable (smolagents requires every input that does not)", async () => {
  const { tools } = await client.listTools();
  for (const tool of tools) {
    const required = new Set(tool.inputSchema.required ?? []);
    for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
      expect([tool.name, name, (schema as { nullable?: boolean }).nullable === true]).toEqual([
        tool.name,
        name,
        !required.has(name),
      ]);
    }
  }
});

test("snapshot of tools/list (a contract change must be deliberate)", async () => {
  const { tools } = await client.listTools();
  expect(tools).toMatchSnapshot();
});

test("the object browser costs tools/list at most 1 KB, and only list_buckets / list_objects results carry the caller's tools", async () => {
  const { tools } = await client.listTools();
  const withView = JSON.stringify(tools).length;
  const without = JSON.stringify(tools.map(({ _meta, ...tool }) => tool)).length;
  expect(withView - without).toBeGreaterThan(0);
  expect(withView - without).toBeLessThanOrEqual(1024);
  const listed = await client.callTool({ name: "list_buckets", arguments: {} });
  expect((listed._meta as Record<string, string[]>)["store-mcp-server/tools"]).toEqual(tools.map((t) => t.name));
  const other = await client.callTool({
    name: "head_object",
    arguments: { bucket_name: "no-such-bucket-here", object_key: "k" },
  });
  expect(other._meta).toBeUndefined();
});
