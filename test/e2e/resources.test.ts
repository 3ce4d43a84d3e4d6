/**
 * Objects as MCP resources through the compiled binary: the template, a
 * bounded resources/list, resources/read (text, image, binary, truncated,
 * awkward keys, missing objects, the bucket allowlist), completions for the
 * template's variables, and resource_link items in tool results.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { LISTED_BUCKETS, LISTED_PER_BUCKET } from "../../src/mcp/resources.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

const PNG = Uint8Array.from(
  Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
    "base64",
  ),
);
const AWKWARD = "dir one/a#b?c%d é.txt";
let bucket: string;
let session: Awaited<ReturnType<typeof connectBinary>>;

beforeAll(async () => {
  bucket = await freshBucket("resources");
  const put = (Key: string, Body: string | Uint8Array, ContentType?: string) =>
    sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body, ...(ContentType ? { ContentType } : {}) }));
  await put("docs/readme.md", "# Read me\n", "text/markdown");
  await put("docs/guide.md", "guide", "text/markdown");
  await put("img/dot.png", PNG, "image/png");
  await put("bin/blob.bin", Uint8Array.from([0, 1, 2, 3, 255]), "application/octet-stream");
  await put("big.txt", "x".repeat(3 * 1024 * 1024), "text/plain");
  await put(AWKWARD, "awkward", "text/plain");
  session = await connectBinary({ env: s3Env() });
}, 60_000);
afterAll(async () => {
  await session.close();
});

const uriOf = (key: string) => `s3://${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`;

test("the server offers the object template and lists a bounded set of objects", async () => {
  const { resourceTemplates } = await session.client.listResourceTemplates();
  // Objects, and the skills' files (the prompts' recipes as skills: mcp/skills.ts).
  expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["s3://{bucket}/{+key}", "skill://{+path}"]);
  const { resources } = await session.client.listResources();
  // Objects, and the object browser's page (an MCP App view, listed as hosts expect).
  expect(resources.filter((r) => r.uri.startsWith("s3://")).length).toBeLessThanOrEqual(
    LISTED_BUCKETS * LISTED_PER_BUCKET,
  );
  expect(resources.filter((r) => !r.uri.startsWith("s3://")).map((r) => [r.uri, r.mimeType])).toEqual([
    ["ui://store-mcp-server/object-browser.html", "text/html;profile=mcp-app"],
  ]);
  // The first LISTED_PER_BUCKET keys of each bucket, in key order.
  const only = await connectBinary({ env: { ...s3Env(), STORE_BUCKETS: bucket } });
  try {
    const mine = (await only.client.listResources()).resources.filter((r) => r.uri.startsWith("s3://"));
    expect(mine.map((r) => r.name).sort()).toEqual(
      ["big.txt", "bin/blob.bin", AWKWARD, "docs/guide.md", "docs/readme.md", "img/dot.png"].sort(),
    );
    expect(mine.find((r) => r.name === "docs/readme.md")).toMatchObject({ uri: uriOf("docs/readme.md"), size: 10 });
  } finally {
    await only.close();
  }
  expect(session.client.getServerCapabilities()?.completions).toBeDefined();
});

test("resources/read: text as text, an image and binary as base64 blobs, each with its type", async () => {
  const text = await session.client.readResource({ uri: uriOf("docs/readme.md") });
  expect(text.contents[0]).toMatchObject({
    uri: uriOf("docs/readme.md"),
    mimeType: "text/markdown",
    text: "# Read me\n",
  });
  const image = await session.client.readResource({ uri: uriOf("img/dot.png") });
  expect(image.contents[0]).toMatchObject({ mimeType: "image/png", blob: Buffer.from(PNG).toString("base64") });
  const binary = await session.client.readResource({ uri: uriOf("bin/blob.bin") });
  expect(binary.contents[0]).toMatchObject({
    mimeType: "application/octet-stream",
    blob: Buffer.from([0, 1, 2, 3, 255]).toString("base64"),
  });
  const awkward = await session.client.readResource({ uri: uriOf(AWKWARD) });
  expect(awkward.contents[0]).toMatchObject({ text: "awkward" });
});

test("resources/read is bounded like get_object read mode: 1 MiB, truncated with next_offset", async () => {
  const big = await session.client.readResource({ uri: uriOf("big.txt") });
  const first = big.contents[0] as { text: string; _meta: Record<string, unknown> };
  expect(first.text.length).toBe(1024 * 1024);
  expect(first._meta).toMatchObject({ size: 3 * 1024 * 1024, truncated: true, next_offset: 1024 * 1024 });
});

test("a missing object is 'resource not found' (-32602 with the URI in its data, as 2026-07-28 has it) with the actionable text; other buckets obey the allowlist", async () => {
  const missing = await session.client
    .readResource({ uri: uriOf("nope.txt") })
    .catch((e: { code: number; message: string; data?: { uri?: string } }) => e);
  expect((missing as { code: number }).code).toBe(-32602);
  expect((missing as { data?: { uri?: string } }).data?.uri).toBe(uriOf("nope.txt"));
  expect((missing as { message: string }).message).toContain("NoSuchKey");
  const limited = await connectBinary({ env: s3Env(), args: ["--bucket", "some-other-bucket"] });
  try {
    const refused = await limited.client
      .readResource({ uri: uriOf("docs/readme.md") })
      .catch((e: { message: string }) => e);
    expect((refused as { message: string }).message).toContain("BucketNotAllowed");
  } finally {
    await limited.close();
  }
});

test("completions: bucket names by prefix, then keys and folders under a prefix, one level at a time", async () => {
  const ref = { type: "ref/resource" as const, uri: "s3://{bucket}/{+key}" };
  const buckets = await session.client.complete({ ref, argument: { name: "bucket", value: bucket.slice(0, 6) } });
  expect(buckets.completion.values).toContain(bucket);
  const top = await session.client.complete({
    ref,
    argument: { name: "key", value: "" },
    context: { arguments: { bucket } },
  });
  expect(top.completion.values).toEqual(expect.arrayContaining(["docs/", "img/", "bin/", "big.txt"]));
  const docs = await session.client.complete({
    ref,
    argument: { name: "key", value: "docs/g" },
    context: { arguments: { bucket } },
  });
  expect(docs.completion.values).toEqual(["docs/guide.md"]);
});

test("with STORE_RESOURCE_LINKS=true, tool results link objects: list_objects items and a truncated read carry resource_link (off by default)", async () => {
  expect(
    (await call(session.client, "list_objects", { bucket_name: bucket, prefix: "docs/" })).content.some(
      (c) => c.type === "resource_link",
    ),
  ).toBe(false);
  const linked = await connectBinary({ env: { ...s3Env(), STORE_RESOURCE_LINKS: "true" } });
  try {
    const listed = await call(linked.client, "list_objects", { bucket_name: bucket, prefix: "docs/" });
    const links = listed.content.filter((c) => c.type === "resource_link") as { uri: string; name: string }[];
    expect(links.map((l) => l.name).sort()).toEqual(["docs/guide.md", "docs/readme.md"]);
    expect(links.find((l) => l.name === "docs/readme.md")!.uri).toBe(uriOf("docs/readme.md"));
    const read = await call(linked.client, "get_object", {
      bucket_name: bucket,
      object_key: "big.txt",
      max_content_size: 1000,
    });
    expect(read.content.some((c) => c.type === "resource_link" && c.uri === uriOf("big.txt"))).toBe(true);
  } finally {
    await linked.close();
  }
  // Clients that show only structuredContent still get the text.
  const whole = await call(session.client, "get_object", { bucket_name: bucket, object_key: "docs/readme.md" });
  expect(whole.structuredContent?.text).toBe("# Read me\n");
  expect(textOf(whole)).toContain("# Read me");
});

test("what a caller can enumerate through resources/list and completions follows its tools: --tools get_object lists nothing", async () => {
  const ref = { type: "ref/resource" as const, uri: "s3://{bucket}/{+key}" };
  const cases = [
    { tools: "get_object", buckets: false, keys: false },
    { tools: "get_object,list_buckets", buckets: true, keys: false },
    { tools: "get_object,list_objects", buckets: false, keys: true },
  ];
  for (const c of cases) {
    const narrow = await connectBinary({ env: s3Env(), args: ["--tools", c.tools] });
    try {
      // resources/list enumerates buckets and keys: only with both listings offered.
      expect(
        (await narrow.client.listResources()).resources.filter((r) => r.uri.startsWith("s3://")),
        c.tools,
      ).toEqual([]);
      const buckets = (await narrow.client.complete({ ref, argument: { name: "bucket", value: bucket.slice(0, 6) } }))
        .completion.values;
      expect(buckets.includes(bucket), c.tools).toBe(c.buckets);
      const keys = (
        await narrow.client.complete({
          ref,
          argument: { name: "key", value: "docs/" },
          context: { arguments: { bucket } },
        })
      ).completion.values;
      expect(keys.length > 0, c.tools).toBe(c.keys);
      // A key it already knows is still readable.
      const read = await narrow.client.readResource({ uri: uriOf("docs/readme.md") });
      expect(read.contents[0]).toMatchObject({ text: "# Read me\n" });
    } finally {
      await narrow.close();
    }
  }
});
