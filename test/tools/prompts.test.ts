/**
 * The workflow prompts through a real MCP client against Ceph: listed where
 * their tools are offered, fetched with arguments into one user message
 * naming the tools and the arguments given, their bucket and key arguments
 * completed from the store as the listing tools may list it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectInMemory } from "../helpers/in-memory.ts";
import { freshBucket, sdkClient } from "../helpers/s3.ts";

let client: Client;
let bucket: string;
beforeAll(async () => {
  bucket = await freshBucket("prompts");
  for (const key of ["reports/q1.pdf", "reports/q2.pdf", "logs/a.log"])
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
  client = await connectInMemory();
});
afterAll(() => client.close());

const textOfPrompt = (p: Awaited<ReturnType<Client["getPrompt"]>>) =>
  p.messages.map((m) => (m.content.type === "text" ? m.content.text : "")).join("\n");

test("five workflow prompts are listed with titles and their arguments", async () => {
  const { prompts } = await client.listPrompts();
  expect(prompts.map((p) => p.name)).toEqual([
    "upload_folder",
    "find_space",
    "share_file",
    "review_exposure",
    "clean_up",
  ]);
  for (const p of prompts) expect(p.title && p.description).toBeTruthy();
  const share = prompts.find((p) => p.name === "share_file")!;
  expect(share.arguments?.map((a) => [a.name, a.required])).toEqual([
    ["bucket", true],
    ["key", true],
  ]);
  expect(prompts.find((p) => p.name === "find_space")!.arguments?.map((a) => [a.name, a.required])).toEqual([
    ["bucket", true],
    ["prefix", false],
  ]);
});

test("a prompt is offered only where its tools are: read-only leaves out the upload, --tools read keeps what only reads", async () => {
  const readOnly = await connectInMemory({ readOnly: true });
  const reading = await connectInMemory({ tools: ["list_buckets", "list_objects", "head_object", "presign_url"] });
  try {
    expect((await readOnly.listPrompts()).prompts.map((p) => p.name)).toEqual([
      "find_space",
      "share_file",
      "review_exposure",
      "clean_up",
    ]);
    expect((await reading.listPrompts()).prompts.map((p) => p.name)).toEqual(["share_file"]);
  } finally {
    await readOnly.close();
    await reading.close();
  }
});

test("fetched with arguments, a prompt is one user message: the recipe's tools in order, with the arguments given", async () => {
  const share = await client.getPrompt({ name: "share_file", arguments: { bucket, key: "reports/q1.pdf" } });
  expect(share.messages).toHaveLength(1);
  expect(share.messages[0]!.role).toBe("user");
  const text = textOfPrompt(share);
  expect(text).toContain(`s3://${bucket}/reports/q1.pdf`);
  expect(text.indexOf("head_object")).toBeLessThan(text.indexOf("presign_url"));
  expect(text).toContain("expires_in 86400");

  const upload = textOfPrompt(
    await client.getPrompt({ name: "upload_folder", arguments: { local_dir: "./site", bucket, prefix: "www/" } }),
  );
  expect(upload).toContain('local_dir "./site"');
  expect(upload).toContain("dry_run: true");
  expect(upload.indexOf("dry_run: true")).toBeLessThan(upload.indexOf("without dry_run"));
  // An optional argument left out: the whole bucket.
  expect(textOfPrompt(await client.getPrompt({ name: "find_space", arguments: { bucket } }))).toContain(
    `s3://${bucket}/ and`,
  );
});

test("a required argument left out is refused, naming it", async () => {
  await expect(client.getPrompt({ name: "share_file", arguments: { bucket } })).rejects.toThrow(/key/);
});

test("bucket and key arguments complete from the store (a fresh connection: completion before any prompt was fetched)", async () => {
  const client = await connectInMemory();
  try {
    const buckets = await client.complete({
      ref: { type: "ref/prompt", name: "share_file" },
      argument: { name: "bucket", value: bucket.slice(0, -2) },
    });
    expect(buckets.completion.values).toContain(bucket);
    const folders = await client.complete({
      ref: { type: "ref/prompt", name: "share_file" },
      argument: { name: "key", value: "" },
      context: { arguments: { bucket } },
    });
    expect(folders.completion.values.sort()).toEqual(["logs/", "reports/"]);
    const keys = await client.complete({
      ref: { type: "ref/prompt", name: "share_file" },
      argument: { name: "key", value: "reports/" },
      context: { arguments: { bucket } },
    });
    expect(keys.completion.values.sort()).toEqual(["reports/q1.pdf", "reports/q2.pdf"]);
    // The prefix of find_space completes the same way.
    const prefix = await client.complete({
      ref: { type: "ref/prompt", name: "find_space" },
      argument: { name: "prefix", value: "lo" },
      context: { arguments: { bucket } },
    });
    expect(prefix.completion.values).toEqual(["logs/"]);
  } finally {
    await client.close();
  }
});
