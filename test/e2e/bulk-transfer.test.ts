/** upload_directory and download_prefix through the compiled binary against Ceph RGW: trees, skips, unchanged, conflicts, mirrors, limits. */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, keysUnder, s3Env, sdkClient } from "../helpers/s3.ts";

let client: Client;
let close: () => Promise<void>;
let base: string;
let allowed: string;
let outside: string;

beforeAll(async () => {
  base = tempDir("bulk");
  allowed = join(base, "allowed");
  outside = join(base, "outside");
  mkdirSync(allowed);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "OUTSIDE");
  ({ client, close } = await connectBinary({ env: s3Env(), args: ["--allowed-dir", allowed, "--allow-delete"] }));
});
afterAll(() => close());

type Problem = { kind: string; name: string; code: string; message: string };
const problems = (s: Record<string, any>, kind: string): Problem[] =>
  (s.problems as Problem[]).filter((p) => p.kind === kind);

/** A tree with nested folders, unicode and spaces, an empty file and an empty folder, plus what a walk must skip. */
function makeTree(root: string): Record<string, string | Uint8Array> {
  const files: Record<string, string | Uint8Array> = {
    "index.html": "<h1>hi</h1>",
    "css/site.css": "body{}",
    "docs/a b/naïve résumé.txt": "unicode and spaces",
    "docs/empty.txt": "",
    "img/deep/er/pic.bin": randomBytes(300_000, 7),
    "big.bin": randomBytes(6 * 1024 * 1024 + 11, 9),
  };
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), body);
  }
  mkdirSync(join(root, "empty-dir"));
  symlinkSync(join(outside, "secret.txt"), join(root, "link-out.txt"));
  symlinkSync(outside, join(root, "dir-link"));
  execFileSync("mkfifo", [join(root, "fifo")]);
  writeFileSync(join(outside, "hard.txt"), "HARD");
  linkSync(join(outside, "hard.txt"), join(root, "hard.txt"));
  return files;
}

describe("upload_directory", () => {
  let bucket: string;
  let tree: string;
  let files: Record<string, string | Uint8Array>;
  beforeAll(async () => {
    bucket = await freshBucket("updir");
    tree = join(allowed, "site");
    mkdirSync(tree);
    files = makeTree(tree);
  });

  test("uploads every regular file at prefix + path; skips and reports symlinks, FIFOs and hard links; empty folders make no object", async () => {
    const r = await call(client, "upload_directory", { local_dir: "site", bucket_name: bucket, prefix: "rel/v2" });
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent!;
    expect(s.counts).toMatchObject({ done: 6, unchanged: 0, failed: 0, unsafe: 0, skipped_local: 4 });
    expect(s.complete).toBe(true);
    expect(
      problems(s, "skipped_local")
        .map((x) => `${x.name}:${x.code}`)
        .sort(),
    ).toEqual([
      "dir-link:LocalSymlinkSkipped",
      "fifo:NotARegularFile",
      "hard.txt:LocalHardLinkSkipped",
      "link-out.txt:LocalSymlinkSkipped",
    ]);
    expect(await keysUnder(bucket)).toEqual(
      Object.keys(files)
        .map((k) => `rel/v2/${k}`)
        .sort(),
    );
    for (const [rel, body] of Object.entries(files)) {
      const got = await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: `rel/v2/${rel}` }));
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(Buffer.from(body))).toBe(true);
    }
    const head = await sdkClient().send(new HeadObjectCommand({ Bucket: bucket, Key: "rel/v2/index.html" }));
    expect(head.ContentType).toBe("text/html");
    expect(Number(head.Metadata?.mtime)).toBeCloseTo(statSync(join(tree, "index.html")).mtimeMs / 1000, 0);
    expect(textOf(r)).toContain("6 object(s) uploaded");
  }, 60_000);

  test("a second call uploads nothing; changing one file uploads just that one", async () => {
    const again = await call(client, "upload_directory", { local_dir: "site", bucket_name: bucket, prefix: "rel/v2" });
    expect(again.structuredContent!.counts).toMatchObject({ done: 0, unchanged: 6 });
    writeFileSync(join(tree, "css/site.css"), "body{x}"); // a different size
    writeFileSync(join(tree, "index.html"), "<h1>HI</h1>"); // same size, other bytes: the MD5 tells
    const big = join(tree, "big.bin");
    const t = new Date(Date.now() + 5000); // a multipart object: the time tells
    utimesSync(big, t, t);
    const third = await call(client, "upload_directory", { local_dir: "site", bucket_name: bucket, prefix: "rel/v2" });
    expect(third.structuredContent!.counts).toMatchObject({ done: 3, unchanged: 3 });
    expect([...third.structuredContent!.done].sort()).toEqual([
      "rel/v2/big.bin",
      "rel/v2/css/site.css",
      "rel/v2/index.html",
    ]);
  }, 60_000);

  test("progress for the whole job: objects and MiB done of what is known so far, growing", async () => {
    const seen: { progress: number; total?: number; message?: string }[] = [];
    await client.callTool(
      {
        name: "upload_directory",
        arguments: { local_dir: "site", bucket_name: bucket, prefix: "progress", skip_unchanged: false },
      },
      undefined,
      { onprogress: (p) => seen.push(p) },
    );
    expect(seen.length).toBeGreaterThan(0);
    // The last notification may arrive after the answer, when the client no longer listens: every one is well-formed.
    for (const p of seen) expect(p.message).toMatch(/^upload_directory: [1-6]\/[1-6] objects, [0-9.]+\/[0-9.]+ MiB$/);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
  }, 60_000);

  test("download_prefix brings back multipart objects too (no MD5 to check: length and order)", async () => {
    const r = await call(client, "download_prefix", { bucket_name: bucket, prefix: "rel/v2", local_dir: "back" });
    expect(r.structuredContent).toMatchObject({ counts: { done: 6, failed: 0 } });
    for (const rel of Object.keys(files))
      expect(readFileSync(join(allowed, "back", rel)).equals(readFileSync(join(tree, rel)))).toBe(true);
  }, 60_000);

  test("include and exclude pick files by glob; a dry run changes nothing", async () => {
    const dry = await call(client, "upload_directory", {
      local_dir: "site",
      bucket_name: bucket,
      prefix: "only",
      include: ["**/*.txt", "*.html"],
      exclude: ["docs/empty.txt"],
      dry_run: true,
    });
    expect(dry.structuredContent).toMatchObject({ dry_run: true, counts: { done: 2 } });
    expect(await keysUnder(bucket, "only/")).toEqual([]);
    const r = await call(client, "upload_directory", {
      local_dir: "site",
      bucket_name: bucket,
      prefix: "only",
      include: ["**/*.txt", "*.html"],
      exclude: ["docs/empty.txt"],
    });
    expect(await keysUnder(bucket, "only/")).toEqual(["only/docs/a b/naïve résumé.txt", "only/index.html"]);
    expect(r.structuredContent!.counts.done).toBe(2);
  }, 60_000);

  test("max_objects bounds one call; calling again goes on until complete", async () => {
    const first = await call(client, "upload_directory", {
      local_dir: "site",
      bucket_name: bucket,
      prefix: "step",
      max_objects: 4,
    });
    expect(first.structuredContent).toMatchObject({ complete: false, counts: { done: 4 } });
    expect(first.structuredContent!.next).toContain("same arguments");
    const second = await call(client, "upload_directory", {
      local_dir: "site",
      bucket_name: bucket,
      prefix: "step",
      max_objects: 4,
    });
    expect(second.structuredContent).toMatchObject({ complete: true, counts: { done: 2, unchanged: 4 } });
    expect((await keysUnder(bucket, "step/")).length).toBe(6);
  }, 60_000);

  test("delete_extraneous: a dry run without confirm, then the mirror deletes what the folder no longer has (not what the filters leave out)", async () => {
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "rel/v2/old/gone.txt", Body: "old" }));
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "rel/v2/keep.log", Body: "excluded" }));
    const args = {
      local_dir: "site",
      bucket_name: bucket,
      prefix: "rel/v2",
      delete_extraneous: true,
      exclude: ["*.log"],
    };
    const dry = await call(client, "upload_directory", args);
    expect(dry.structuredContent).toMatchObject({
      dry_run: true,
      counts: { deleted: 1 },
      deleted: ["rel/v2/old/gone.txt"],
    });
    expect(dry.structuredContent!.next).toContain("confirm: true");
    expect(await keysUnder(bucket, "rel/v2/old/")).toEqual(["rel/v2/old/gone.txt"]);
    const real = await call(client, "upload_directory", { ...args, confirm: true });
    expect(real.structuredContent).toMatchObject({ dry_run: false, counts: { deleted: 1, failed: 0 } });
    expect(await keysUnder(bucket, "rel/v2/old/")).toEqual([]);
    expect(await keysUnder(bucket, "rel/v2/keep.log")).toEqual(["rel/v2/keep.log"]);
  }, 60_000);

  test("a mirror stopped by max_objects deletes nothing until the transfers are all done", async () => {
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "held/stale.txt", Body: "stale" }));
    const args = {
      local_dir: "site",
      bucket_name: bucket,
      prefix: "held",
      delete_extraneous: true,
      confirm: true,
      max_objects: 2,
    };
    const first = await call(client, "upload_directory", args);
    expect(first.structuredContent).toMatchObject({ complete: false, counts: { done: 2, deleted: 0 } });
    expect(textOf(first)).toContain("not deleted: the job stopped at max_objects");
    expect(await keysUnder(bucket, "held/stale")).toEqual(["held/stale.txt"]);
    let last = first;
    for (let i = 0; i < 5 && !last.structuredContent!.complete; i++)
      last = await call(client, "upload_directory", args);
    expect(last.structuredContent).toMatchObject({ complete: true, counts: { deleted: 1 } });
    expect(await keysUnder(bucket, "held/stale")).toEqual([]);
  }, 60_000);

  test("a missing or outside directory is a clear error", async () => {
    const missing = await call(client, "upload_directory", { local_dir: "nope", bucket_name: bucket, prefix: "" });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain("LocalDirectoryNotFound");
    const out = await call(client, "upload_directory", { local_dir: outside, bucket_name: bucket, prefix: "" });
    expect(textOf(out)).toContain("LocalPathNotAllowed");
  });
});

describe("download_prefix", () => {
  let bucket: string;
  beforeAll(async () => {
    bucket = await freshBucket("dlpre");
    const s3 = sdkClient();
    const put = (Key: string, Body: string | Uint8Array) =>
      s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body }));
    await put("logs/a.txt", "alpha");
    await put("logs/sub dir/ünï.txt", "unicode");
    await put("logs/empty.txt", "");
    await put("logs/folder/", ""); // a folder marker
    await put("logs/big.bin", randomBytes(3 * 1024 * 1024, 3));
    // Hostile keys: none may be written, let alone outside.
    for (const key of [
      "logs/../escape.txt",
      "logs/a//b.txt",
      "logs//abs.txt",
      "logs/ctl\u0001.txt",
      "logs/./dot.txt",
      `logs/${"n".repeat(300)}.txt`,
      "logs/x",
      "logs/x/y.txt",
    ])
      await put(key, "HOSTILE");
  });

  test("each key below the prefix becomes a file; unsafe keys are skipped and reported, nothing lands outside", async () => {
    const r = await call(client, "download_prefix", { bucket_name: bucket, prefix: "logs", local_dir: "dl" });
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent!;
    expect(s.counts).toMatchObject({ done: 5, failed: 0 });
    const unsafe = problems(s, "unsafe")
      .map((u) => u.name)
      .sort();
    expect(unsafe).toEqual(
      [
        "logs/../escape.txt",
        "logs/./dot.txt",
        "logs//abs.txt",
        "logs/a//b.txt",
        `logs/ctl\u0001.txt`,
        `logs/${"n".repeat(300)}.txt`,
        "logs/x/y.txt",
      ].sort(),
    );
    const dl = join(allowed, "dl");
    expect(readFileSync(join(dl, "a.txt"), "utf8")).toBe("alpha");
    expect(readFileSync(join(dl, "sub dir/ünï.txt"), "utf8")).toBe("unicode");
    expect(readFileSync(join(dl, "empty.txt"), "utf8")).toBe("");
    expect(readFileSync(join(dl, "x"), "utf8")).toBe("HOSTILE");
    expect(Buffer.from(readFileSync(join(dl, "big.bin"))).equals(Buffer.from(randomBytes(3 * 1024 * 1024, 3)))).toBe(
      true,
    );
    expect(existsSync(join(allowed, "escape.txt"))).toBe(false);
    expect(readdirSync(base).sort()).toEqual(["allowed", "outside"]);
    expect(
      readdirSync(dl, { recursive: true })
        .map(String)
        .filter((n) => n.endsWith(".partial")),
    ).toEqual([]);
  }, 60_000);

  test("again: everything unchanged; a changed local file is a conflict, replaced only with overwrite", async () => {
    const again = await call(client, "download_prefix", { bucket_name: bucket, prefix: "logs/", local_dir: "dl" });
    expect(again.structuredContent!.counts).toMatchObject({ done: 0, unchanged: 5 });
    writeFileSync(join(allowed, "dl", "a.txt"), "ALPHA"); // same size, other bytes
    const conflict = await call(client, "download_prefix", { bucket_name: bucket, prefix: "logs/", local_dir: "dl" });
    expect(conflict.structuredContent!.counts).toMatchObject({ done: 0, conflicts: 1 });
    expect(problems(conflict.structuredContent!, "conflict")[0]).toMatchObject({
      name: "logs/a.txt",
      code: "LocalFileDiffers",
    });
    expect(readFileSync(join(allowed, "dl", "a.txt"), "utf8")).toBe("ALPHA");
    const forced = await call(client, "download_prefix", {
      bucket_name: bucket,
      prefix: "logs/",
      local_dir: "dl",
      overwrite: true,
    });
    expect(forced.structuredContent!.counts).toMatchObject({ done: 1, conflicts: 0 });
    expect(readFileSync(join(allowed, "dl", "a.txt"), "utf8")).toBe("alpha");
  }, 60_000);

  test("delete_extraneous removes local files the prefix no longer has, after confirm", async () => {
    writeFileSync(join(allowed, "dl", "stale.txt"), "stale");
    const dry = await call(client, "download_prefix", {
      bucket_name: bucket,
      prefix: "logs/",
      local_dir: "dl",
      delete_extraneous: true,
    });
    expect(dry.structuredContent).toMatchObject({ dry_run: true, counts: { deleted: 1 } });
    expect(existsSync(join(allowed, "dl", "stale.txt"))).toBe(true);
    const real = await call(client, "download_prefix", {
      bucket_name: bucket,
      prefix: "logs/",
      local_dir: "dl",
      delete_extraneous: true,
      confirm: true,
    });
    expect(real.structuredContent).toMatchObject({ dry_run: false, counts: { deleted: 1 } });
    expect(existsSync(join(allowed, "dl", "stale.txt"))).toBe(false);
    expect(existsSync(join(allowed, "dl", "a.txt"))).toBe(true);
  }, 60_000);
});
