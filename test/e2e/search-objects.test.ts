/**
 * search_objects through the compiled binary against Ceph: literal, regex and
 * case-folded searches, gzip'd objects (by name and by Content-Encoding),
 * binary and oversized objects skipped and counted, context lines, a
 * continuation that resumes at exactly the next line (inside an object and
 * across objects), a runaway regex bounded, and bad input.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

let bucket: string;
let client: Client;
let close: () => Promise<void>;
const put = (Key: string, Body: string | Uint8Array, extra: Record<string, string> = {}) =>
  sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body, ...extra }));
const log = (n: number, every: number, word = "order 81723 failed") =>
  `${Array.from(
    { length: n },
    (_, i) =>
      `2026-11-20T10:00:${String(i % 60).padStart(2, "0")} line ${i + 1}${(i + 1) % every === 0 ? ` ERROR ${word}` : " INFO ok"}`,
  ).join("\n")}\n`;

beforeAll(async () => {
  requireBinary();
  bucket = await freshBucket("search");
  await put("logs/a.log", log(100, 10));
  await put("logs/b.log.gz", gzipSync(log(50, 25)));
  await put("logs/c.log", gzipSync(log(40, 20)), { ContentEncoding: "gzip" });
  await put(
    "logs/image.png",
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0, ...new TextEncoder().encode("ERROR order 81723 failed")]),
  );
  await put("logs/big.log", log(3000, 1000));
  await put("other/x.log", log(10, 1));
  ({ client, close } = await connectBinary({ env: s3Env() }));
}, 60_000);
afterAll(async () => {
  await close?.();
});

const search = (args: Record<string, unknown>) =>
  call(client, "search_objects", { bucket_name: bucket, prefix: "logs/", ...args });

describe("search_objects", () => {
  test("a literal: every matching line with its key and number, gzip'd objects decompressed, binary skipped and counted", async () => {
    const r = await search({ pattern: "order 81723", max_object_bytes: 100_000 });
    const s = r.structuredContent!;
    expect(r.isError, textOf(r)).toBeFalsy();
    const found = s.matches.map((m: { key: string; line: number }) => `${m.key}:${m.line}`);
    expect(found).toEqual([
      ...[10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((l) => `logs/a.log:${l}`),
      "logs/b.log.gz:25",
      "logs/b.log.gz:50",
      "logs/c.log:20",
      "logs/c.log:40",
    ]);
    expect(s.matches[0].text).toBe("2026-11-20T10:00:09 line 10 ERROR order 81723 failed");
    expect(s.objects_skipped).toEqual({ binary: 1, too_large: 1 });
    expect(s.objects_searched).toBe(3);
    expect(s.objects_with_matches).toEqual([
      { key: "logs/a.log", matching_lines: 10 },
      { key: "logs/b.log.gz", matching_lines: 2 },
      { key: "logs/c.log", matching_lines: 2 },
    ]);
    expect(s.truncated).toBe(false);
    // Without a prefix (the MCP Inspector cannot send ""), the whole bucket: the same matches.
    const { prefix: _prefix, ...whole } = {
      bucket_name: bucket,
      prefix: "",
      pattern: "order 81723",
      max_object_bytes: 100_000,
    };
    const all = await call(client, "search_objects", whole);
    expect(all.isError, textOf(all)).toBeFalsy();
    expect(all.structuredContent!.matches.map((m: { key: string; line: number }) => `${m.key}:${m.line}`)).toEqual(
      expect.arrayContaining(found),
    );
    expect(s.bytes_read).toBeGreaterThan(0);
    expect(textOf(r)).toContain("logs/a.log:10: 2026-11-20T10:00:09 line 10 ERROR order 81723 failed");
  });

  test("regex (RE2) and ignore_case; include/exclude; context lines", async () => {
    const r = await search({
      pattern: "line [0-9]+0 error",
      regex: true,
      ignore_case: true,
      include: ["*.log"],
      exclude: ["big.*"],
      context_lines: 1,
    });
    const s = r.structuredContent!;
    expect(s.regex_engine).toContain("RE2");
    expect(s.matches.map((m: { key: string }) => m.key)).toEqual([
      ...Array(10).fill("logs/a.log"),
      "logs/c.log",
      "logs/c.log",
    ]);
    expect(s.matches[0]).toMatchObject({
      line: 10,
      before: ["2026-11-20T10:00:08 line 9 INFO ok"],
      after: ["2026-11-20T10:00:10 line 11 INFO ok"],
    });
    // The last line has no line after it.
    expect(s.matches.at(-1)).toMatchObject({ key: "logs/c.log", line: 40, after: [] });
  });

  test("a continuation resumes at exactly the next line, inside an object and across objects", async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let calls = 0;
    do {
      const r = await search({
        pattern: "ERROR",
        max_matches: 3,
        max_object_bytes: 100_000,
        ...(token ? { continuation_token: token } : {}),
      });
      expect(r.isError, textOf(r)).toBeFalsy();
      for (const m of r.structuredContent!.matches) seen.push(`${m.key}:${m.line}`);
      token = r.structuredContent!.continuation_token;
      calls++;
    } while (token && calls < 20);
    expect(seen).toEqual([
      ...[10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((l) => `logs/a.log:${l}`),
      "logs/b.log.gz:25",
      "logs/b.log.gz:50",
      "logs/c.log:20",
      "logs/c.log:40",
    ]);
    expect(calls).toBeGreaterThanOrEqual(5);
  });

  test("a regex that would run away in a backtracking engine answers at once; a bad one is an actionable error", async () => {
    // A backtracking engine tries 2^n ways to split line 1 before giving up.
    await put("evil/a.txt", `${"a".repeat(50_000)}!\naaa\n`);
    const started = performance.now();
    const r = await call(client, "search_objects", {
      bucket_name: bucket,
      prefix: "evil/",
      pattern: "(a+)+$",
      regex: true,
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(r.structuredContent!.matches.map((m: { line: number }) => m.line)).toEqual([2]);
    const bad = await search({ pattern: "(unclosed", regex: true });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("InvalidParameter");
    expect(textOf(bad)).toContain("RE2");
    const token = await search({ pattern: "x", continuation_token: "bm90LW91cnM" });
    expect(textOf(token)).toContain("not made by search_objects");
  });

  test("--read-only offers search_objects and inspect_object; --bucket keeps them to its buckets", async () => {
    const ro = await connectBinary({ env: s3Env(), args: ["--read-only"] });
    try {
      const names = (await ro.client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["search_objects", "inspect_object"]));
      expect(
        (
          await call(ro.client, "search_objects", {
            bucket_name: bucket,
            prefix: "logs/",
            pattern: "order 81723",
            max_matches: 1,
          })
        ).structuredContent!.matches,
      ).toHaveLength(1);
      expect(
        (await call(ro.client, "inspect_object", { bucket_name: bucket, object_key: "logs/a.log" })).structuredContent!
          .format,
      ).toBe("text");
    } finally {
      await ro.close();
    }
    const other = await connectBinary({ env: s3Env(), args: ["--bucket", "some-other-bucket"] });
    try {
      for (const [tool, args] of [
        ["search_objects", { prefix: "", pattern: "x" }],
        ["inspect_object", { object_key: "logs/a.log" }],
        ["get_object", { object_key: "logs/a.log", archive_member: "x" }],
      ] as const) {
        const refused = await call(other.client, tool, { bucket_name: bucket, ...args });
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain("BucketNotAllowed");
      }
    } finally {
      await other.close();
    }
  });

  test("an object stored with Content-Encoding: gzip is read, downloaded and searched as its stored bytes (Bun's fetch would inflate it)", async () => {
    const dir = tempDir("gzip-encoded");
    const stored = gzipSync(log(40, 20));
    const local = await connectBinary({ env: s3Env(), args: ["--allowed-dir", dir] });
    try {
      const one = await call(local.client, "get_object", {
        bucket_name: bucket,
        object_key: "logs/c.log",
        mode: "download",
        local_path: join(dir, "one.log"),
      });
      expect(one.isError, textOf(one)).toBeFalsy();
      expect(new Uint8Array(readFileSync(join(dir, "one.log")))).toEqual(new Uint8Array(stored));
      const all = await call(local.client, "download_prefix", {
        bucket_name: bucket,
        prefix: "logs/",
        local_dir: join(dir, "all"),
        include: ["c.log"],
      });
      expect(all.isError, textOf(all)).toBeFalsy();
      expect(new Uint8Array(readFileSync(join(dir, "all", "c.log")))).toEqual(new Uint8Array(stored));
      const found = await call(local.client, "search_objects", {
        bucket_name: bucket,
        prefix: "logs/",
        pattern: "order 81723",
        include: ["c.log"],
      });
      expect(found.structuredContent!.matches.map((m: { line: number }) => m.line)).toEqual([20, 40]);
    } finally {
      await local.close();
    }
  });
});
