/**
 * Least-privilege keys and large accounts, through the compiled binary: a
 * key that may not list buckets (a proxy in front of Ceph RGW answers
 * ListBuckets 403 AccessDenied, as AWS does for an IAM user without
 * s3:ListAllMyBuckets and R2/B2 for a bucket-scoped token) still works with
 * its buckets — list_buckets, completions, resources/list and doctor answer
 * from the configured buckets a HEAD confirms, or say what to configure;
 * list_buckets pages (prefix, max_buckets, continuation_token) on Ceph; and
 * a store that says "more" without a token, or repeats one, ends a listing
 * with a clear error instead of looping or reporting it complete.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { type FakeS3, fakeEnv, listObjectsXml, startFakeS3, xml } from "../helpers/fake-s3.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient, uniqueBucket } from "../helpers/s3.ts";

const DENIED = () =>
  new Response(
    `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`,
    { status: 403, headers: { "content-type": "application/xml" } },
  );

describe("a key that may not list buckets", () => {
  let proxy: ReturnType<typeof startRecordingProxy>;
  let mine: string;
  beforeAll(async () => {
    mine = await freshBucket("lp-mine");
    await sdkClient().send(new PutObjectCommand({ Bucket: mine, Key: "reports/q3.csv", Body: "a,b\n" }));
    // ListBuckets is GET / (path style): refused, as for a bucket-scoped key; everything else reaches Ceph.
    proxy = startRecordingProxy(s3().endpoint, undefined, (r) =>
      r.method === "GET" && r.path === "/" ? DENIED() : undefined,
    );
  });
  afterAll(() => proxy.stop());
  const env = () => ({ ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint });

  test("with --bucket: list_buckets, completions and resources/list answer from the configured buckets a HEAD confirms; the tools work", async () => {
    const missing = uniqueBucket("lp-missing");
    const { client, close } = await connectBinary({ env: env(), args: ["--bucket", mine, "--bucket", missing] });
    try {
      const listed = await call(client, "list_buckets", {});
      expect(listed.isError, textOf(listed)).toBeFalsy();
      expect(listed.structuredContent).toMatchObject({
        buckets: [{ name: mine }],
        count: 1,
        source: "configured",
        next_continuation_token: null,
      });
      expect(textOf(listed)).toContain("may not list buckets");
      const completed = await client.complete({
        ref: { type: "ref/resource", uri: "s3://{bucket}/{+key}" },
        argument: { name: "bucket", value: "" },
      });
      expect(completed.completion.values).toEqual([mine]);
      const resources = (await client.listResources()).resources
        .filter((r) => r.uri.startsWith("s3://"))
        .map((r) => r.name);
      expect(resources).toEqual(["reports/q3.csv"]);
      expect((await call(client, "list_objects", { bucket_name: mine })).structuredContent!.objects).toHaveLength(1);
    } finally {
      await close();
    }
  });

  test("without a configured bucket: list_buckets says the key cannot list buckets and what to configure; completions are empty; the server serves on", async () => {
    const { client, close } = await connectBinary({ env: env() });
    try {
      const listed = await call(client, "list_buckets", {});
      expect(listed.isError).toBe(true);
      expect(textOf(listed)).toContain("AccessDenied");
      expect(textOf(listed)).toContain("may not list buckets");
      expect(textOf(listed)).toContain("--bucket");
      const completed = await client.complete({
        ref: { type: "ref/resource", uri: "s3://{bucket}/{+key}" },
        argument: { name: "bucket", value: "" },
      });
      expect(completed.completion.values).toEqual([]);
      expect((await client.listResources()).resources.filter((r) => r.uri.startsWith("s3://"))).toEqual([]);
      expect(
        (await call(client, "get_object", { bucket_name: mine, object_key: "reports/q3.csv" })).isError,
      ).toBeFalsy();
    } finally {
      await close();
    }
  });

  test("doctor passes with a note, with and without --bucket", async () => {
    for (const args of [["--bucket", mine], []]) {
      const proc = Bun.spawn([requireBinary(), "doctor", "--json", ...args], {
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env() },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      expect(code, stdout).toBe(0);
      const check = (JSON.parse(stdout).checks as { name: string; status: string; fix?: string }[]).find(
        (c) => c.name === "list buckets",
      )!;
      expect(check.status).toBe("warn");
      expect(check.fix).toContain(args.length ? "--bucket names that exist" : "--bucket NAME");
    }
  });
});

test("list_buckets pages: prefix, max_buckets and continuation_token, never more than a page", async () => {
  const stem = `lp-page-${Date.now().toString(36)}`;
  const made = [await freshBucket(`${stem}-a`), await freshBucket(`${stem}-b`), await freshBucket(`${stem}-c`)].sort();
  const prefix = made[0]!.slice(0, made[0]!.indexOf(stem) + stem.length);
  const { client, close } = await connectBinary({ env: s3Env() });
  try {
    const seen: string[] = [];
    let token: string | undefined;
    for (let i = 0; i < 5; i++) {
      const page = await call(client, "list_buckets", {
        prefix,
        max_buckets: 2,
        ...(token ? { continuation_token: token } : {}),
      });
      expect(page.isError, textOf(page)).toBeFalsy();
      expect(page.structuredContent!.buckets.length).toBeLessThanOrEqual(2);
      seen.push(...page.structuredContent!.buckets.map((b: { name: string }) => b.name));
      token = page.structuredContent!.next_continuation_token ?? undefined;
      if (!token) break;
    }
    expect(seen).toEqual(made);
    const completed = await client.complete({
      ref: { type: "ref/resource", uri: "s3://{bucket}/{+key}" },
      argument: { name: "bucket", value: prefix },
    });
    expect(completed.completion.values).toEqual(made);
  } finally {
    await close();
  }
});

describe("a store that says more without a way on", () => {
  let fake: FakeS3;
  beforeAll(async () => {
    fake = await startFakeS3();
  });
  afterAll(() => fake.stop());

  test("no token: list_objects says so; storage_usage, find_objects and delete_objects by prefix end with ListingNotAdvancing, never as complete", async () => {
    const tokenless = xml(
      `<ListBucketResult><Name>b</Name><Prefix></Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated><Contents><Key>k1</Key><Size>1</Size><ETag>"x"</ETag></Contents></ListBucketResult>`,
    );
    fake.handle((req) =>
      req.path.startsWith("/b") && req.method === "GET" && !req.query.has("uploads")
        ? { body: tokenless }
        : { body: xml("<ListMultipartUploadsResult><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>") },
    );
    const { client, close } = await connectBinary({ env: fakeEnv(fake, { STORE_ALLOW_DELETE: "true" }) });
    try {
      const page = await call(client, "list_objects", { bucket_name: "b" });
      expect(page.isError, textOf(page)).toBeFalsy();
      expect(page.structuredContent).toMatchObject({ is_truncated: true, next_continuation_token: null });
      expect(page.structuredContent!.warning).toContain("no continuation token");
      for (const [tool, args] of [
        ["storage_usage", { bucket_name: "b" }],
        ["find_objects", { bucket_name: "b", glob: "*" }],
        ["delete_objects", { bucket_name: "b", prefix: "k" }],
      ] as const) {
        const out = await call(client, tool, args);
        expect(JSON.stringify(out), tool).toContain("ListingNotAdvancing");
      }
    } finally {
      await close();
    }
  }, 60_000);

  test("the same token again: list_objects refuses to page on, a bulk scan stops", async () => {
    fake.handle((req) =>
      req.method === "GET" && req.path.startsWith("/b") && !req.query.has("uploads")
        ? { body: listObjectsXml("b", ["k1"], true) }
        : { body: xml("<ListMultipartUploadsResult><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>") },
    );
    const { client, close } = await connectBinary({ env: fakeEnv(fake) });
    try {
      const again = await call(client, "list_objects", { bucket_name: "b", continuation_token: "next" });
      expect(again.isError).toBe(true);
      expect(textOf(again)).toContain("ListingNotAdvancing");
      const usage = await call(client, "storage_usage", { bucket_name: "b" });
      expect(JSON.stringify(usage)).toContain("ListingNotAdvancing");
    } finally {
      await close();
    }
  }, 60_000);
});
