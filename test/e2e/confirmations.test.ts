/**
 * Confirmations through the compiled binary against Ceph RGW, with a client
 * that answers elicitation as a user would: each confirmable tool asks with
 * a form that says what it confirms (not "Delete" for a tag change), only an
 * explicit yes applies, and the outcome — accepted, declined, cancelled,
 * not_asked — is in structuredContent with a `next` that tells the model not
 * to retry on its own (Claude Code, Codex and Pydantic AI show their model
 * nothing else). A declined real run is never reported as a dry run.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GetBucketCorsCommand, GetObjectTaggingCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ANSWERS, type Answer } from "../helpers/elicitation.ts";
import { tempDir } from "../helpers/files.ts";
import { call, requireBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, objectsUnder, s3Env, sdkClient } from "../helpers/s3.ts";

let client: Client;
let answer: Answer = "decline";
const forms: { message: string; title: string; description: string }[] = [];
let bucket: string;
let dir: string;

beforeAll(async () => {
  bucket = await freshBucket("confirm");
  dir = tempDir("confirm");
  mkdirSync(join(dir, "site"));
  writeFileSync(join(dir, "site", "new.txt"), "new");
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["--allow-admin", "--allow-delete", "--allowed-dir", dir],
    env: { PATH: process.env.PATH ?? "/usr/bin", HOME: process.env.HOME ?? "/root", ...s3Env() },
    stderr: "ignore",
  });
  client = new Client({ name: "asking", version: "1" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    const field = (
      req.params as unknown as { requestedSchema: { properties: { confirm: { title: string; description: string } } } }
    ).requestedSchema.properties.confirm;
    forms.push({ message: req.params.message, title: field.title, description: field.description });
    return ANSWERS[answer];
  });
  await client.connect(transport);
});
afterAll(() => client?.close());

async function asked(tool: string, args: Record<string, unknown>, given: Answer) {
  answer = given;
  const before = forms.length;
  const r = await call(client, tool, args);
  expect(r.isError, textOf(r)).toBeFalsy();
  expect(forms.length, `${tool} asked once`).toBe(before + 1);
  return { result: r, form: forms.at(-1)! };
}

/** Declined, unticked and cancelled change nothing and say so in structuredContent; accepted applies. */
async function eachAnswer(tool: string, args: Record<string, unknown>, title: string, unchanged: () => Promise<void>) {
  for (const given of ["decline", "unticked", "cancel"] as const) {
    const { result, form } = await asked(tool, { ...args, confirm: true }, given);
    expect(form.title, tool).toBe(title);
    const confirmation = given === "cancel" ? "cancelled" : "declined";
    expect(result.structuredContent, `${tool} ${given}`).toMatchObject({ confirmation });
    expect(result.structuredContent!.applied ?? false).toBe(false);
    expect(result.structuredContent!.dry_run ?? false, `${tool} ${given}: not a dry run`).toBe(false);
    expect(result.structuredContent!.next).toMatch(/do not (call again|retry) unless the user asks/);
    expect(textOf(result)).toContain(given === "cancel" ? "dismissed or not answered" : "declined");
    await unchanged();
  }
  const { result } = await asked(tool, { ...args, confirm: true }, "accept");
  expect(result.structuredContent, `${tool} accept`).toMatchObject({ confirmation: "accepted" });
  return result;
}

describe("every confirmable tool: its own form, and the outcome in structuredContent", () => {
  test("put_object_tags", async () => {
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "t.txt", Body: "t" }));
    const tags = async () =>
      (await sdkClient().send(new GetObjectTaggingCommand({ Bucket: bucket, Key: "t.txt" }))).TagSet ?? [];
    const r = await eachAnswer(
      "put_object_tags",
      { bucket_name: bucket, object_key: "t.txt", tags: { team: "a" } },
      "Change the tags",
      async () => expect(await tags()).toEqual([]),
    );
    expect(r.structuredContent).toMatchObject({ applied: true });
    expect(await tags()).toEqual([{ Key: "team", Value: "a" }]);
    expect(forms.at(-1)!.description).toContain("tags");
  });

  test("set_bucket_cors, set_bucket_lifecycle, set_bucket_policy and delete_bucket_policy", async () => {
    const cors = async () =>
      sdkClient()
        .send(new GetBucketCorsCommand({ Bucket: bucket }))
        .then(
          () => "set",
          () => "none",
        );
    await eachAnswer(
      "set_bucket_cors",
      { bucket_name: bucket, rules: [{ allowed_origins: ["https://app.example.com"], allowed_methods: ["GET"] }] },
      "Change CORS rules",
      async () => expect(await cors()).toBe("none"),
    );
    expect(await cors()).toBe("set");
    await eachAnswer(
      "set_bucket_lifecycle",
      { bucket_name: bucket, rules: [{ id: "uploads", abort_incomplete_uploads_after_days: 3 }] },
      "Change lifecycle rules",
      async () => {},
    );
    const policy = JSON.stringify({
      Version: "2012-10-17",
      Statement: [
        {
          Effect: "Allow",
          Principal: { AWS: ["arn:aws:iam:::user/someone"] },
          Action: ["s3:GetObject"],
          Resource: [`arn:aws:s3:::${bucket}/*`],
        },
      ],
    });
    await eachAnswer("set_bucket_policy", { bucket_name: bucket, policy }, "Change the bucket policy", async () => {});
    await eachAnswer("delete_bucket_policy", { bucket_name: bucket }, "Change the bucket policy", async () => {});
  });

  test("delete_objects: a declined real run is not a dry run", async () => {
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "d/1.txt", Body: "1" }));
    const r = await eachAnswer("delete_objects", { bucket_name: bucket, prefix: "d/" }, "Delete", async () =>
      expect([...(await objectsUnder(bucket, "d/")).keys()]).toEqual(["d/1.txt"]),
    );
    expect(r.structuredContent).toMatchObject({ applied: true, deleted_count: 1, dry_run: false });
  });

  test("copy_prefix move and a mirror's deletes", async () => {
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "m/old.txt", Body: "old" }));
    await eachAnswer(
      "copy_prefix",
      { source_bucket: bucket, source_prefix: "m/", bucket_name: bucket, prefix: "moved/", move: true },
      "Move",
      async () => expect([...(await objectsUnder(bucket, "moved/")).keys()]).toEqual([]),
    );
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "site/old.txt", Body: "old" }));
    await eachAnswer(
      "upload_directory",
      { local_dir: "site", bucket_name: bucket, prefix: "site", delete_extraneous: true },
      "Delete extraneous",
      async () =>
        expect([...(await objectsUnder(bucket, "site/")).keys()].sort()).toEqual(["site/new.txt", "site/old.txt"]),
    );
    expect([...(await objectsUnder(bucket, "site/")).keys()]).toEqual(["site/new.txt"]);
  });

  test("set_bucket_versioning (last: it cannot be undone)", async () => {
    await eachAnswer(
      "set_bucket_versioning",
      { bucket_name: bucket, status: "Enabled" },
      "Change versioning",
      async () => {},
    );
  });
});

test("a client that cannot ask: the model's confirm: true stands, reported as not_asked", async () => {
  const { connectBinary } = await import("../helpers/mcp.ts");
  const plain = await connectBinary({ env: s3Env(), args: ["--allow-delete"] });
  try {
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "n/1.txt", Body: "1" }));
    const r = await call(plain.client, "delete_objects", { bucket_name: bucket, prefix: "n/", confirm: true });
    expect(r.structuredContent).toMatchObject({ confirmation: "not_asked", applied: true, deleted_count: 1 });
    const dry = await call(plain.client, "delete_objects", { bucket_name: bucket, prefix: "n/" });
    expect(dry.structuredContent).toMatchObject({ confirmation: "not_asked", dry_run: true });
  } finally {
    await plain.close();
  }
});
