/**
 * Bulk jobs when things go wrong, through the compiled binary against Ceph
 * RGW: a cancel mid-job leaves nothing partial in sight (what is in flight is
 * kept hidden and recorded to resume) and a second call finishes the job,
 * leaving nothing; a store that refuses some requests gets the rest done and the failures
 * reported; a directory swapped for a symlink to outside during a directory
 * upload or a prefix download never lets anything be read or written there.
 */

import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand, ListMultipartUploadsCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { keptRecords } from "../helpers/kept.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, objectsUnder, openUploadsAfterCleanUp, s3, s3Env, sdkClient } from "../helpers/s3.ts";
import { startSwapper } from "../helpers/swapper.ts";

const SMALL = 150;
/** The transfers a cut kept (runtime/kept-transfers.ts), as recorded in the state directory. */
const BIG = 24 * 1024 * 1024;
let dir: string;

beforeAll(() => {
  dir = tempDir("bulk-robust");
  const tree = join(dir, "tree");
  mkdirSync(join(tree, "small"), { recursive: true });
  for (let i = 0; i < SMALL; i++)
    writeFileSync(join(tree, "small", `f${String(i).padStart(4, "0")}.txt`), `file ${i} `.repeat(100 + i));
  writeFileSync(join(tree, "big-1.bin"), randomBytes(BIG, 1));
  writeFileSync(join(tree, "big-2.bin"), randomBytes(BIG, 2));
});

describe("cancel in the middle", () => {
  test("a cancel that arrives while CompleteMultipartUpload is on its way: the store completes it, and no record of it is kept", async () => {
    const bucket = await freshBucket("bcomplete");
    const state = tempDir("complete-state");
    let cancel!: () => void;
    const cancelled = new Promise<void>((resolve) => (cancel = resolve));
    // The store gets the Complete only once the call is cancelled: it completes an upload the server has hung up on.
    const proxy = startRecordingProxy(s3().endpoint, (r) =>
      r.method === "POST" && r.search.includes("uploadId=") ? cancelled.then(() => Bun.sleep(300)) : undefined,
    );
    const { client, close } = await connectBinary({
      env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint, STORE_STATE_DIR: state, STORE_CALL_BUDGET_SECONDS: "0" },
      args: ["--allowed-dir", dir],
    });
    try {
      const controller = new AbortController();
      const pending = client.callTool(
        {
          name: "upload_file",
          arguments: { local_file_path: "tree/big-1.bin", bucket_name: bucket, object_key: "big.bin" },
        },
        undefined,
        { signal: controller.signal },
      );
      while (!proxy.requests.some((r) => r.method === "POST" && r.search.includes("uploadId="))) await Bun.sleep(20);
      controller.abort();
      await pending.catch(() => {});
      cancel();
      await Bun.sleep(1500);
      const open = ((await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).map(
        (u) => u.UploadId!,
      );
      // Whatever the cut did, what is recorded is exactly what is open (a record of a completed upload is a lie).
      expect(
        keptRecords(state)
          .uploads.map((u) => u.upload_id)
          .sort(),
      ).toEqual(open.sort());
      const body = await (
        await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: "big.bin" }))
      ).Body!.transformToByteArray();
      expect(body.length).toBe(BIG);
    } finally {
      await close();
      proxy.stop();
    }
  });

  test("upload_directory: every object there is whole, a multipart upload in flight is kept only as recorded, and a second call finishes the job leaving none", async () => {
    const bucket = await freshBucket("bcancel");
    const state = tempDir("bulk-state");
    const { client, close } = await connectBinary({
      env: { ...s3Env(), STORE_STATE_DIR: state },
      args: ["--allowed-dir", dir],
    });
    try {
      const controller = new AbortController();
      const pending = client.callTool(
        { name: "upload_directory", arguments: { local_dir: "tree", bucket_name: bucket, prefix: "t" } },
        undefined,
        { signal: controller.signal },
      );
      await Bun.sleep(300);
      controller.abort();
      await expect(pending).rejects.toThrow();
      await Bun.sleep(500);
      const open = ((await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [])
        .map((u) => u.UploadId)
        .sort();
      expect(open).toEqual(
        keptRecords(state)
          .uploads.map((u) => u.upload_id)
          .sort(),
      );
      const partial = await objectsUnder(bucket);
      expect(partial.size).toBeLessThan(SMALL + 2);
      for (const [key, size] of partial) expect(size).toBe(readFileSync(join(dir, "tree", key.slice(2))).length);
      const rest = await call(client, "upload_directory", { local_dir: "tree", bucket_name: bucket, prefix: "t" });
      expect(rest.structuredContent).toMatchObject({ complete: true, counts: { failed: 0 } });
      expect(rest.structuredContent!.counts.done + rest.structuredContent!.counts.unchanged).toBe(SMALL + 2);
      expect(rest.structuredContent!.counts.unchanged).toBe(partial.size);
      expect((await objectsUnder(bucket)).size).toBe(SMALL + 2);
      expect(await openUploadsAfterCleanUp(bucket)).toEqual([]);
      expect(keptRecords(state).uploads).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);

  test("download_prefix: every file there is whole, a temp file in flight is kept only hidden and recorded, and a second call finishes the job leaving none", async () => {
    const bucket = await freshBucket("bcanceldl");
    const state = tempDir("bulk-state");
    // The large objects come slowly (the whole job took under 300 ms on loopback): the cancel lands while one is in
    // flight. They are listed first and each runs alone, so the cancel waits for one's temp file to be growing (once
    // small files were down, both large ones were; under load the small ones could all land before the cancel did).
    const slow = await startFaultProxy(s3().endpoint);
    const { client, close } = await connectBinary({
      env: { ...s3Env(), STORE_ENDPOINT_URL: slow.endpoint, STORE_STATE_DIR: state },
      args: ["--allowed-dir", dir],
    });
    const largeInFlight = () => {
      try {
        return readdirSync(join(dir, "down"), { withFileTypes: true }).some(
          (e) => e.isFile() && e.name.startsWith(".big-") && statSync(join(dir, "down", e.name)).size > 0,
        );
      } catch {
        return false;
      }
    };
    try {
      await call(client, "upload_directory", { local_dir: "tree", bucket_name: bucket, prefix: "" });
      slow.set({ kind: "throttle", bytesPerSecond: 4 * 1024 * 1024 });
      const controller = new AbortController();
      const pending = client.callTool(
        { name: "download_prefix", arguments: { bucket_name: bucket, prefix: "", local_dir: "down" } },
        undefined,
        { signal: controller.signal },
      );
      const started = Date.now();
      while (!largeInFlight() && Date.now() - started < 20_000) await Bun.sleep(10);
      expect(largeInFlight()).toBe(true);
      controller.abort();
      await expect(pending).rejects.toThrow();
      await Bun.sleep(1000);
      const all = readdirSync(join(dir, "down"), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
      // A temp file left is one a cut kept: hidden, and recorded.
      const temps = all
        .filter((e) => e.name.endsWith(".partial"))
        .map((e) => join(e.parentPath, e.name))
        .sort();
      expect(temps).toEqual(
        keptRecords(state)
          .downloads.map((d) => d.temp)
          .sort(),
      );
      expect(temps.every((t) => t.split("/").pop()!.startsWith("."))).toBe(true);
      const files = all.filter((e) => !e.name.endsWith(".partial"));
      expect(files.length).toBeLessThan(SMALL + 2);
      for (const e of files)
        expect(
          readFileSync(join(e.parentPath, e.name)).equals(
            readFileSync(join(e.parentPath.replace(join(dir, "down"), join(dir, "tree")), e.name)),
          ),
        ).toBe(true);
      slow.set({ kind: "pass" });
      const rest = await call(client, "download_prefix", { bucket_name: bucket, prefix: "", local_dir: "down" });
      expect(rest.structuredContent).toMatchObject({ complete: true, counts: { failed: 0, conflicts: 0 } });
      expect(rest.structuredContent!.counts.unchanged).toBe(files.length);
      expect(readdirSync(join(dir, "down", "small")).length).toBe(SMALL);
      expect(readdirSync(join(dir, "down"), { recursive: true }).filter((n) => String(n).endsWith(".partial"))).toEqual(
        [],
      );
      expect(keptRecords(state).downloads).toEqual([]);
    } finally {
      await close();
      await slow.stop();
    }
  }, 120_000);
});

describe("a store that refuses some requests", () => {
  test("the job does what it can, reports each failure with its S3 code, and the next call does the rest", async () => {
    const bucket = await freshBucket("bfault");
    // The store refuses every write of three of the files (however often it is tried) while `refusing`.
    let refusing = true;
    const refused = ["f0003.txt", "f0077.txt", "f0140.txt"];
    const proxy = startRecordingProxy(s3().endpoint, undefined, (q) =>
      refusing && q.method === "PUT" && refused.some((name) => q.path.endsWith(`/small/${name}`))
        ? new Response(
            `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`,
            { status: 403, headers: { "content-type": "application/xml" } },
          )
        : undefined,
    );
    const { client, close } = await connectBinary({
      env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint },
      args: ["--allowed-dir", dir],
    });
    try {
      const args = { local_dir: "tree", bucket_name: bucket, prefix: "p", include: ["small/**"] };
      const r = await call(client, "upload_directory", { ...args, skip_unchanged: false });
      expect(r.isError, textOf(r)).toBeFalsy();
      const s = r.structuredContent!;
      expect(s.counts).toMatchObject({ done: SMALL - 3, failed: 3 });
      expect(s.complete).toBe(true);
      expect(
        s.problems
          .filter((p: { kind: string }) => p.kind === "failed")
          .map((p: { name: string; code: string }) => [p.name, p.code])
          .sort(),
      ).toEqual(refused.map((name) => [`p/small/${name}`, "AccessDenied"]));
      expect(textOf(r)).toContain("3 failed (e.g. p/small/");
      expect((await objectsUnder(bucket)).size).toBe(SMALL - 3);
      refusing = false;
      const rest = await call(client, "upload_directory", args);
      expect(rest.structuredContent!.counts).toMatchObject({ done: 3, unchanged: SMALL - 3, failed: 0 });
      expect((await objectsUnder(bucket)).size).toBe(SMALL);
    } finally {
      await close();
      proxy.stop();
    }
  }, 120_000);
});

describe("a directory swapped for a symlink to outside, over and over", () => {
  let allowed: string;
  let outside: string;
  beforeAll(() => {
    const base = tempDir("bulk-race");
    allowed = join(base, "allowed");
    outside = join(base, "outside");
    mkdirSync(join(allowed, "tree", "sub"), { recursive: true });
    mkdirSync(outside);
    for (let i = 0; i < 40; i++) writeFileSync(join(allowed, "tree", "sub", `f${i}.txt`), "inside");
    for (let i = 0; i < 40; i++) writeFileSync(join(outside, `f${i}.txt`), "OUTSIDE SECRET");
    symlinkSync(outside, join(allowed, "tree", "swap"));
  });
  const outsideUntouched = () => {
    expect(readdirSync(outside).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `f${i}.txt`).sort());
    for (const f of readdirSync(outside)) expect(readFileSync(join(outside, f), "utf8")).toBe("OUTSIDE SECRET");
  };

  test("upload_directory never ships a file from outside", async () => {
    const bucket = await freshBucket("brace");
    const { client, close } = await connectBinary({ env: s3Env(), args: ["--allowed-dir", allowed] });
    const swapper = await startSwapper(join(allowed, "tree", "sub"), join(allowed, "tree", "swap"));
    try {
      for (let i = 0; i < 15; i++)
        await call(client, "upload_directory", {
          local_dir: "tree",
          bucket_name: bucket,
          prefix: `r${i}`,
          skip_unchanged: false,
        });
    } finally {
      expect(await swapper.stop()).toBeGreaterThan(100);
      await close();
    }
    const keys = [...(await objectsUnder(bucket)).keys()];
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const body = await (
        await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: key }))
      ).Body!.transformToString();
      expect(body).toBe("inside");
    }
    outsideUntouched();
  }, 120_000);

  test("download_prefix never writes outside", async () => {
    const bucket = await freshBucket("bracedl");
    for (let i = 0; i < 20; i++)
      await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: `sub/f${i}.txt`, Body: "FROM THE STORE" }));
    for (let i = 0; i < 20; i++)
      await sdkClient().send(
        new PutObjectCommand({ Bucket: bucket, Key: `sub/new/n${i}.txt`, Body: "FROM THE STORE" }),
      );
    const { client, close } = await connectBinary({ env: s3Env(), args: ["--allowed-dir", allowed] });
    const swapper = await startSwapper(join(allowed, "tree", "sub"), join(allowed, "tree", "swap"));
    try {
      for (let i = 0; i < 15; i++)
        await call(client, "download_prefix", {
          bucket_name: bucket,
          prefix: "",
          local_dir: "tree",
          overwrite: true,
          skip_unchanged: false,
        });
    } finally {
      expect(await swapper.stop()).toBeGreaterThan(100);
      await close();
    }
    outsideUntouched();
    const leftovers = readdirSync(allowed, { recursive: true })
      .map(String)
      .filter((n) => n.endsWith(".partial"));
    expect(leftovers).toEqual([]);
  }, 120_000);
});

describe("paths made from keys follow no symlink", () => {
  test("download_prefix: a key through a symlinked folder inside local_dir is unsafe, even with overwrite; the mirror deletes nothing through it", async () => {
    const bucket = await freshBucket("blinkdl");
    for (const key of ["link/x.txt", "link/deeper/y.txt", "plain/z.txt", "file-link.txt"])
      await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `STORE ${key}` }));
    const root = tempDir("bulk-links");
    const localDir = join(root, "dl");
    const other = join(root, "other");
    mkdirSync(localDir);
    mkdirSync(other);
    writeFileSync(join(other, "x.txt"), "the user's own file");
    writeFileSync(join(other, "elsewhere.txt"), "keep me");
    // Both links stay inside the allowed directory: the old walk followed them.
    symlinkSync("../other", join(localDir, "link"));
    symlinkSync("../other/elsewhere.txt", join(localDir, "file-link.txt"));
    const { client, close } = await connectBinary({
      env: { ...s3Env(), STORE_ALLOW_DELETE: "true" },
      args: ["--allowed-dir", root],
    });
    try {
      const result = await call(client, "download_prefix", {
        bucket_name: bucket,
        prefix: "",
        local_dir: "dl",
        overwrite: true,
        skip_unchanged: false,
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      const text = JSON.stringify(result.structuredContent);
      expect(result.structuredContent!.counts).toMatchObject({ done: 1 });
      expect(text).toContain("UnsafeLocalPath");
      expect(readFileSync(join(other, "x.txt"), "utf8")).toBe("the user's own file");
      expect(readdirSync(other).sort()).toEqual(["elsewhere.txt", "x.txt"]);
      expect(readFileSync(join(other, "elsewhere.txt"), "utf8")).toBe("keep me");
      expect(readFileSync(join(localDir, "plain", "z.txt"), "utf8")).toBe("STORE plain/z.txt");
      // A mirror of a prefix that holds none of it: nothing behind the links is removed.
      const mirror = await call(client, "download_prefix", {
        bucket_name: bucket,
        prefix: "plain/",
        local_dir: "dl",
        delete_extraneous: true,
        confirm: true,
      });
      expect(mirror.isError, textOf(mirror)).toBeFalsy();
      expect(readdirSync(other).sort()).toEqual(["elsewhere.txt", "x.txt"]);
    } finally {
      await close();
    }
  }, 60_000);
});
