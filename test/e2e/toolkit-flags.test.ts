/** Who gets which tools, through the compiled binary: --allow-delete, --tools, read-only; null arguments; elicitation. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { runBinary } from "../helpers/raw-stdio.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

const names = async (args: string[], env: Record<string, string> = {}) => {
  const { client, close } = await connectBinary({ env: { ...s3Env(), ...env }, args });
  try {
    return (await client.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await close();
  }
};

let bucket: string;
beforeAll(async () => {
  bucket = await freshBucket("flags");
  for (const key of ["a.txt", "b.txt", "c.txt"])
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
});

describe("tool selection", () => {
  test("deleting objects is opt-in: --allow-delete or STORE_ALLOW_DELETE", async () => {
    expect(await names([])).not.toContain("delete_object");
    expect(await names(["--allow-delete"])).toEqual(expect.arrayContaining(["delete_object", "delete_objects"]));
    expect(await names([], { STORE_ALLOW_DELETE: "true" })).toContain("delete_objects");
    // delete_bucket is a spec tool: always there (unless read-only or deselected).
    expect(await names([])).toContain("delete_bucket");
  });

  test("--tools takes names and groups; STORE_TOOLS too; an unknown name is a configuration error", async () => {
    // With long tools offered, so are the job tools (the call budget is on by default).
    expect(await names(["--tools", "read"])).toEqual([
      "cancel_job",
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
      "query_objects",
      "search_objects",
      "storage_usage",
    ]);
    expect(await names(["--tools", "list_buckets,put_object,admin"])).toEqual([
      "create_bucket",
      "delete_bucket",
      "list_buckets",
      "put_object",
    ]);
    expect(await names([], { STORE_TOOLS: "write" })).toEqual([
      "cancel_job",
      "copy_object",
      "copy_prefix",
      "job_status",
      "list_jobs",
      "put_object",
      "upload_directory",
      "upload_file",
    ]);
    // The delete group still needs --allow-delete, and the server says so at start-up.
    expect(await names(["--tools", "delete"])).toEqual([]);
    const warned = await connectBinary({ env: s3Env(), args: ["--tools", "delete_object,list_buckets"] });
    await warned.client.listTools();
    await warned.close();
    expect(warned.stderr()).toContain(
      "--tools names delete_object, but deleting objects is off without --allow-delete",
    );
    expect(await names(["--tools", "delete", "--allow-delete"])).toEqual(["delete_object", "delete_objects"]);
    const bad = runBinary(["--tools", "list_buckets,format_disk"], s3Env());
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain("format_disk");
  });

  test("read-only hides every tool that writes, even with --allow-delete, and refuses a PUT link", async () => {
    const ro = await names(["--read-only", "--allow-delete"]);
    expect(ro).toEqual([
      "cancel_job",
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
      "query_objects",
      "search_objects",
      "storage_usage",
    ]);
    const { client, close } = await connectBinary({ env: s3Env(), args: ["--read-only"] });
    try {
      const put = await call(client, "presign_url", { bucket_name: bucket, object_key: "x", method: "PUT" });
      expect(textOf(put)).toContain("ReadOnlyMode");
      expect((await call(client, "presign_url", { bucket_name: bucket, object_key: "a.txt" })).isError).toBeFalsy();
    } finally {
      await close();
    }
  });
});

test("null for an optional parameter means absent, for old and new tools", async () => {
  const { client, close } = await connectBinary({ env: s3Env(), args: ["--allow-delete"] });
  try {
    const listed = await call(client, "list_objects", {
      bucket_name: bucket,
      prefix: null,
      max_keys: null,
      continuation_token: null,
      delimiter: null,
    });
    expect(listed.isError).toBeFalsy();
    expect(listed.structuredContent!.objects.length).toBe(3);
    const read = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "a.txt",
      version_id: null,
      mode: null,
      local_path: null,
      max_content_size: null,
      overwrite: null,
      offset: null,
    });
    expect(read.isError).toBeFalsy();
    const head = await call(client, "head_object", { bucket_name: bucket, object_key: "a.txt", version_id: null });
    expect(head.structuredContent!.size).toBe(5);
    const put = await call(client, "put_object", {
      bucket_name: bucket,
      object_key: "n.txt",
      content: "n",
      encoding: null,
      content_type: null,
      cache_control: null,
      storage_class: null,
      metadata: null,
      if_absent: null,
    });
    expect(put.isError).toBeFalsy();
    const dry = await call(client, "delete_objects", {
      bucket_name: bucket,
      keys: null,
      prefix: "n",
      dry_run: null,
      confirm: null,
      max_objects: null,
    });
    expect(dry.structuredContent!.dry_run).toBe(true);
    // A required parameter given as null is still missing.
    const missing = await call(client, "head_object", { bucket_name: bucket, object_key: null });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain("object_key");
  } finally {
    await close();
  }
});

describe("delete_objects asks the user where the client can", () => {
  async function elicitingClient(answer: "accept" | "decline") {
    const transport = new StdioClientTransport({
      command: requireBinary(),
      args: ["--allow-delete"],
      env: { PATH: process.env.PATH ?? "/usr/bin", HOME: process.env.HOME ?? "/root", ...s3Env() },
      stderr: "ignore",
    });
    const client = new Client({ name: "eliciting", version: "1" }, { capabilities: { elicitation: {} } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return answer === "accept" ? { action: "accept", content: { confirm: true } } : { action: "decline" };
    });
    await client.connect(transport);
    return { client, asked };
  }

  test("declined: nothing is deleted although the model confirmed", async () => {
    const { client, asked } = await elicitingClient("decline");
    try {
      const r = await call(client, "delete_objects", { bucket_name: bucket, keys: ["a.txt"], confirm: true });
      expect(asked.length).toBe(1);
      expect(asked[0]).toContain("1 object");
      expect(r.structuredContent!.deleted_count).toBe(0);
      expect(textOf(r)).toContain("declined");
      expect((await call(client, "head_object", { bucket_name: bucket, object_key: "a.txt" })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  test("accepted: deleted", async () => {
    const { client, asked } = await elicitingClient("accept");
    try {
      const r = await call(client, "delete_objects", { bucket_name: bucket, keys: ["b.txt"], confirm: true });
      expect(asked.length).toBe(1);
      expect(r.structuredContent!.deleted).toEqual(["b.txt"]);
    } finally {
      await client.close();
    }
  });
});

afterAll(() => {});
