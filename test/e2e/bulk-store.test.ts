/** copy_prefix, storage_usage and find_objects through the compiled binary against Ceph RGW; deletes refused without --allow-delete. */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, keysUnder, s3Env, sdkClient } from "../helpers/s3.ts";

let client: Client;
let close: () => Promise<void>;
let source: string;
let target: string;

beforeAll(async () => {
  source = await freshBucket("bsrc");
  target = await freshBucket("bdst");
  const put = (Key: string, Body: string | Uint8Array) =>
    sdkClient().send(new PutObjectCommand({ Bucket: source, Key, Body }));
  await put("data/a.txt", "a");
  await put("data/team-x/one.csv", "1,2,3");
  await put("data/team-x/two.csv", randomBytes(20_000, 2));
  await put("data/team-y/big.parquet", randomBytes(300_000, 5));
  await put("data/team-y/deep/small.parquet", "p");
  await put("other/z.txt", "zzz");
  ({ client, close } = await connectBinary({ env: s3Env(), args: ["--allow-delete"] }));
});
afterAll(() => close());

describe("copy_prefix", () => {
  test("copies every object below the prefix server-side; again, nothing; include/exclude apply", async () => {
    const r = await call(client, "copy_prefix", {
      source_bucket: source,
      source_prefix: "data",
      bucket_name: target,
      prefix: "archive/2026",
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent!.counts).toMatchObject({ done: 5, failed: 0 });
    expect(await keysUnder(target)).toEqual([
      "archive/2026/a.txt",
      "archive/2026/team-x/one.csv",
      "archive/2026/team-x/two.csv",
      "archive/2026/team-y/big.parquet",
      "archive/2026/team-y/deep/small.parquet",
    ]);
    const again = await call(client, "copy_prefix", {
      source_bucket: source,
      source_prefix: "data/",
      bucket_name: target,
      prefix: "archive/2026/",
    });
    expect(again.structuredContent!.counts).toMatchObject({ done: 0, unchanged: 5 });
    const only = await call(client, "copy_prefix", {
      source_bucket: source,
      source_prefix: "data/",
      bucket_name: target,
      prefix: "csv/",
      include: ["*.csv"],
    });
    expect(only.structuredContent!.counts.done).toBe(2);
    expect(await keysUnder(target, "csv/")).toEqual(["csv/team-x/one.csv", "csv/team-x/two.csv"]);
  });

  test("overlapping prefixes in one bucket are refused before anything is copied", async () => {
    const r = await call(client, "copy_prefix", {
      source_bucket: source,
      source_prefix: "data/",
      bucket_name: source,
      prefix: "data/copy/",
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("OverlappingPrefixes");
  });

  test("move: a dry run without confirm; with it each source goes once its copy is there", async () => {
    const args = {
      source_bucket: source,
      source_prefix: "data/team-x",
      bucket_name: target,
      prefix: "moved",
      move: true,
    };
    const dry = await call(client, "copy_prefix", args);
    expect(dry.structuredContent).toMatchObject({ dry_run: true, counts: { done: 2, deleted: 2 } });
    expect(await keysUnder(source, "data/team-x/")).toHaveLength(2);
    const real = await call(client, "copy_prefix", { ...args, confirm: true });
    expect(real.structuredContent).toMatchObject({ dry_run: false, counts: { done: 2, deleted: 2, failed: 0 } });
    expect(await keysUnder(source, "data/team-x/")).toEqual([]);
    expect(await keysUnder(target, "moved/")).toEqual(["moved/one.csv", "moved/two.csv"]);
  });
});

describe("without --allow-delete", () => {
  test("a mirror or a move is refused before anything happens; plain copies work", async () => {
    const { client: plain, close: closePlain } = await connectBinary({ env: s3Env() });
    try {
      const move = await call(plain, "copy_prefix", {
        source_bucket: source,
        source_prefix: "other/",
        bucket_name: target,
        prefix: "o/",
        move: true,
        confirm: true,
      });
      expect(move.isError).toBe(true);
      expect(textOf(move)).toContain("DeleteNotAllowed");
      expect(await keysUnder(target, "o/")).toEqual([]);
      const copy = await call(plain, "copy_prefix", {
        source_bucket: source,
        source_prefix: "other/",
        bucket_name: target,
        prefix: "o/",
      });
      expect(copy.structuredContent!.counts.done).toBe(1);
    } finally {
      await closePlain();
    }
  });
});

describe("storage_usage", () => {
  test("totals, groups by folder, the largest, and incomplete multipart uploads", async () => {
    const s3 = sdkClient();
    const mpu = await s3.send(new CreateMultipartUploadCommand({ Bucket: source, Key: "data/team-y/unfinished.bin" }));
    await s3.send(
      new UploadPartCommand({
        Bucket: source,
        Key: "data/team-y/unfinished.bin",
        UploadId: mpu.UploadId,
        PartNumber: 1,
        Body: randomBytes(5 * 1024 * 1024, 1),
      }),
    );
    try {
      const r = await call(client, "storage_usage", { bucket_name: source, prefix: "data/", top: 2 });
      expect(r.isError, textOf(r)).toBeFalsy();
      const s = r.structuredContent!;
      expect(s).toMatchObject({ objects: 3, bytes: 1 + 300_000 + 1, truncated: false });
      expect(s.groups).toEqual([
        { group: "data/team-y/", objects: 2, bytes: 300_001 },
        { group: "data/", objects: 1, bytes: 1 },
      ]);
      expect(s.largest).toHaveLength(2);
      expect(s.largest[0]).toMatchObject({ key: "data/team-y/big.parquet", size: 300_000 });
      expect(s.incomplete_uploads).toMatchObject({ count: 1, bytes: 5 * 1024 * 1024, bytes_of: 1 });
      expect(textOf(r)).toContain("incomplete multipart upload");
      const deep = await call(client, "storage_usage", { bucket_name: source, prefix: "data/", depth: 2 });
      expect(deep.structuredContent!.groups.map((g: { group: string }) => g.group).sort()).toEqual([
        "data/",
        "data/team-y/",
        "data/team-y/deep/",
      ]);
    } finally {
      await s3.send(
        new AbortMultipartUploadCommand({ Bucket: source, Key: "data/team-y/unfinished.bin", UploadId: mpu.UploadId }),
      );
    }
  });

  test("max_keys_scanned stops with a token; the next call covers the rest", async () => {
    const first = await call(client, "storage_usage", { bucket_name: source, max_keys_scanned: 2 });
    expect(first.structuredContent).toMatchObject({ objects: 2, truncated: true });
    const second = await call(client, "storage_usage", {
      bucket_name: source,
      max_keys_scanned: 2,
      continuation_token: first.structuredContent!.continuation_token,
    });
    expect(second.structuredContent).toMatchObject({ objects: 2, truncated: false });
  });
});

describe("find_objects", () => {
  test("by glob, size and time; paging with a token", async () => {
    const big = await call(client, "find_objects", { bucket_name: source, glob: "**/*.parquet", min_size: 1000 });
    expect(big.structuredContent!.matches.map((m: { key: string }) => m.key)).toEqual(["data/team-y/big.parquet"]);
    expect(big.structuredContent!.keys_scanned).toBe(4);
    const names = await call(client, "find_objects", { bucket_name: source, glob: "*.txt" });
    expect(names.structuredContent!.matches.map((m: { key: string }) => m.key)).toEqual(["data/a.txt", "other/z.txt"]);
    const none = await call(client, "find_objects", { bucket_name: source, modified_before: "2001-01-01" });
    expect(none.structuredContent!.matches).toEqual([]);
    const page1 = await call(client, "find_objects", { bucket_name: source, max_results: 1 });
    expect(page1.structuredContent).toMatchObject({ truncated: true });
    const page2 = await call(client, "find_objects", {
      bucket_name: source,
      max_results: 10,
      continuation_token: page1.structuredContent!.continuation_token,
    });
    expect(page2.structuredContent!.matches.map((m: { key: string }) => m.key)).not.toContain(
      page1.structuredContent!.matches[0].key,
    );
    expect(page2.structuredContent!.matches.length + 1).toBe(4);
    const bad = await call(client, "find_objects", { bucket_name: source, modified_after: "yesterday" });
    expect(bad.isError).toBe(true);
  });
});

describe("the user is asked before a bulk job deletes, where the client can ask", () => {
  async function decliningClient(args: string[]) {
    const transport = new StdioClientTransport({
      command: requireBinary(),
      args,
      env: { PATH: process.env.PATH ?? "/usr/bin", HOME: process.env.HOME ?? "/root", ...s3Env() },
      stderr: "ignore",
    });
    const asking = new Client({ name: "eliciting", version: "1" }, { capabilities: { elicitation: {} } });
    const asked: string[] = [];
    asking.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return { action: "decline" };
    });
    await asking.connect(transport);
    return { client: asking, asked };
  }

  test("a declined move copies and deletes nothing; a declined mirror uploads but deletes nothing", async () => {
    const dir = tempDir("bulk-ask");
    mkdirSync(join(dir, "site"));
    writeFileSync(join(dir, "site", "new.txt"), "new");
    const bucket = await freshBucket("bask");
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "m/old.txt", Body: "old" }));
    const { client: asking, asked } = await decliningClient(["--allow-delete", "--allowed-dir", dir]);
    try {
      const move = await call(asking, "copy_prefix", {
        source_bucket: bucket,
        source_prefix: "m/",
        bucket_name: bucket,
        prefix: "moved/",
        move: true,
        confirm: true,
      });
      expect(move.isError, textOf(move)).toBeFalsy();
      expect(move.structuredContent).toMatchObject({
        confirmation: "declined",
        dry_run: false,
        counts: { done: 0, deleted: 0 },
      });
      expect(await keysUnder(bucket)).toEqual(["m/old.txt"]);
      const mirror = await call(asking, "upload_directory", {
        local_dir: "site",
        bucket_name: bucket,
        prefix: "m",
        delete_extraneous: true,
        confirm: true,
      });
      expect(mirror.structuredContent).toMatchObject({ counts: { done: 1, deleted: 0 }, confirmation: "declined" });
      expect(textOf(mirror)).toContain("declined");
      expect(asked).toHaveLength(2);
      expect(asked[1]).toContain("m/old.txt");
      expect(await keysUnder(bucket)).toEqual(["m/new.txt", "m/old.txt"]);
    } finally {
      await asking.close();
    }
  });
});

describe("with a bucket allowlist, keys with . or .. segments are never sent", () => {
  test("copy_prefix reports a listed one as unsafe and copies the rest; a prefix with such a segment is refused", async () => {
    const from = await freshBucket("bdotsrc");
    const to = await freshBucket("bdotdst");
    await sdkClient().send(new PutObjectCommand({ Bucket: from, Key: "d/ok.txt", Body: "ok" }));
    await sdkClient().send(new PutObjectCommand({ Bucket: from, Key: "d/../x.txt", Body: "dots" }));
    const { client: fenced, close: closeFenced } = await connectBinary({
      env: s3Env(),
      args: ["--bucket", from, "--bucket", to],
    });
    try {
      const r = await call(fenced, "copy_prefix", {
        source_bucket: from,
        source_prefix: "d/",
        bucket_name: to,
        prefix: "p/",
      });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(r.structuredContent!.counts).toMatchObject({ done: 1, unsafe: 1, failed: 0 });
      expect(r.structuredContent!.problems[0]).toMatchObject({ kind: "unsafe", name: "d/../x.txt", code: "UnsafeKey" });
      expect(await keysUnder(to)).toEqual(["p/ok.txt"]);
      for (const [tool, args] of [
        ["copy_prefix", { source_bucket: from, source_prefix: "d/", bucket_name: to, prefix: "p/../q" }],
        ["download_prefix", { bucket_name: from, prefix: "d/..", local_dir: "x" }],
        ["upload_directory", { local_dir: "x", bucket_name: to, prefix: "../y" }],
      ] as const) {
        const refused = await call(fenced, tool, args);
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain("UnsafeKey");
      }
    } finally {
      await closeFenced();
    }
  });
});
