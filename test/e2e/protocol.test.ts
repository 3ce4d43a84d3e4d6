/**
 * Protocol robustness and awkward keys, through the compiled binary: whatever
 * arrives on stdin, every valid request gets its right answer.
 */

import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { INITIALIZE, INITIALIZED, rawSession } from "../helpers/raw-stdio.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

let bucket: string;
let dir: string;

beforeAll(async () => {
  bucket = await freshBucket("protocol");
  dir = tempDir("protocol");
});

describe("what the client sends", () => {
  test("a malformed JSON line, an unknown method, an unknown tool, a huge payload: each answered or dropped, the valid ones answered", async () => {
    const hugePrefix = "p".repeat(8 * 1024 * 1024);
    const toolCall = (id: number, name: string, args: object) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name, arguments: args },
    });
    const run = await rawSession([], s3Env(), [
      INITIALIZE,
      INITIALIZED,
      "{this is not json",
      { jsonrpc: "2.0", id: 2, method: "tools/teleport", params: {} },
      toolCall(3, "format_disk", {}),
      toolCall(4, "list_objects", { bucket_name: bucket, prefix: hugePrefix }),
      toolCall(5, "list_buckets", {}),
      { jsonrpc: "2.0", id: 6, method: "ping" },
    ]);
    expect(run.exitCode).toBe(0);
    const lines: Record<number, any> = {};
    for (const line of run.stdoutLines) {
      const msg = JSON.parse(line); // every stdout line is JSON
      if (msg.id !== undefined && msg.id !== null) lines[msg.id] = msg;
    }
    expect(lines[1].result.serverInfo.name).toBe("store-mcp-server");
    expect(lines[2].error.code).toBe(-32601); // method not found
    const unknownTool = lines[3].error?.message ?? textOf(lines[3].result);
    expect(unknownTool).toContain("format_disk");
    expect(lines[4].result.isError).toBe(true);
    expect(textOf(lines[4].result)).toContain("prefix");
    expect(textOf(lines[4].result).length).toBeLessThan(4000); // the huge value is not echoed back
    expect(lines[5].result.isError).toBeFalsy();
    expect(lines[5].result.structuredContent.buckets.map((b: { name: string }) => b.name)).toContain(bucket);
    expect(lines[6].result).toEqual({});
  }, 60_000);

  test("a message over 10 MiB is refused with a JSON-RPC error and logged; the server keeps serving", async () => {
    const pad = "x".repeat(11 * 1024 * 1024);
    const run = await rawSession([], s3Env(), [
      INITIALIZE,
      INITIALIZED,
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "list_buckets", arguments: { pad } } },
      `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"${pad}"}}`,
      { jsonrpc: "2.0", id: 8, method: "tools/list" },
    ]);
    expect(run.exitCode).toBe(0);
    const byId = Object.fromEntries(
      run.stdoutLines
        .map((l) => JSON.parse(l))
        .filter((m) => m.id !== undefined)
        .map((m) => [m.id, m]),
    );
    expect(byId[7].error.code).toBe(-32600);
    expect(byId[7].error.message).toContain("too large");
    expect(byId[8].result.tools.length).toBeGreaterThan(0);
    expect(run.stderr).toContain("refused a message of");
  }, 60_000);

  test("50 concurrent calls mixing uploads, reads, downloads and listings: every one answered correctly", async () => {
    const { client, close } = await connectBinary({ env: s3Env(), args: ["--allowed-dir", dir] });
    try {
      for (let i = 0; i < 20; i++) writeFileSync(join(dir, `c${i}.txt`), `content ${i}\n`.repeat(i + 1));
      const uploads = Array.from({ length: 20 }, (_, i) =>
        call(client, "upload_file", {
          local_file_path: `c${i}.txt`,
          bucket_name: bucket,
          object_key: `concurrent/c${i}.txt`,
        }),
      );
      const listings = Array.from({ length: 10 }, () => call(client, "list_buckets"));
      const upResults = await Promise.all([...uploads, ...listings]);
      for (const r of upResults) expect(r.isError).toBeFalsy();
      const reads = Array.from({ length: 10 }, (_, i) =>
        call(client, "get_object", { bucket_name: bucket, object_key: `concurrent/c${i}.txt` }),
      );
      const downloads = Array.from({ length: 10 }, (_, i) =>
        call(client, "get_object", {
          bucket_name: bucket,
          object_key: `concurrent/c${10 + i}.txt`,
          mode: "download",
          local_path: `back/c${10 + i}.txt`,
        }),
      );
      const lists = Array.from({ length: 10 }, () =>
        call(client, "list_objects", { bucket_name: bucket, prefix: "concurrent/" }),
      );
      const more = Array.from({ length: 20 }, (_, i) =>
        call(client, "upload_file", {
          local_file_path: `c${i}.txt`,
          bucket_name: bucket,
          object_key: `concurrent2/c${i}.txt`,
        }),
      );
      const [readResults, downloadResults, listResults, moreResults] = await Promise.all(
        [reads, downloads, lists, more].map((group) => Promise.all(group)),
      );
      readResults!.forEach((r, i) => expect(textOf(r)).toContain(`content ${i}\n`.repeat(i + 1)));
      downloadResults!.forEach((r, i) => {
        expect(r.isError).toBeFalsy();
        expect(readFileSync(join(dir, `back/c${10 + i}.txt`), "utf8")).toBe(`content ${10 + i}\n`.repeat(11 + i));
      });
      for (const r of listResults!) expect(r.structuredContent?.objects).toHaveLength(20);
      for (const r of moreResults!) expect(r.isError).toBeFalsy();
    } finally {
      await close();
    }
  }, 60_000);
});

describe("keys that are valid but awkward round-trip exactly", () => {
  const KEYS = [
    "with space.txt",
    "  leading and trailing spaces  ",
    "plus+sign+.txt",
    "percent%20not-a-space%.txt",
    "hash#fragment.txt",
    "question?mark=1&and=2.txt",
    "semi;colon,comma:colon@at!bang$dollar'quote(paren)*star.txt",
    "brackets[]{}^`|~.txt",
    "backslash\\in\\key.txt",
    "日本語/ファイル名.txt",
    "emoji-😀-🚀.txt",
    "café-nfc.txt",
    "cafe\u0301-nfd.txt",
    "rtl-עברית-عربي.txt",
    "double//slash.txt",
    "dot./..hidden/./x.txt",
    "a/../b/./c.txt",
    "./leading-dot-segment.txt",
    `${Array.from({ length: 60 }, (_, i) => `d${i}`).join("/")}/deep.txt`,
    `${"k".repeat(1000)}.txt`,
  ];

  test(`${KEYS.length} keys: upload, list, read and download each exactly`, async () => {
    const { client, close } = await connectBinary({ env: s3Env(), args: ["--allowed-dir", dir] });
    try {
      for (const [i, key] of KEYS.entries()) {
        const body = `body of key ${i}: ${key}\n`;
        writeFileSync(join(dir, `awkward-${i}.txt`), body);
        const up = await call(client, "upload_file", {
          local_file_path: `awkward-${i}.txt`,
          bucket_name: bucket,
          object_key: key,
        });
        expect(up.isError, `${key}: ${textOf(up)}`).toBeFalsy();
        expect(up.structuredContent?.key).toBe(key);

        const listed = await call(client, "list_objects", { bucket_name: bucket, prefix: key });
        expect(listed.structuredContent?.objects.map((o: { key: string }) => o.key)).toContain(key);

        const read = await call(client, "get_object", { bucket_name: bucket, object_key: key });
        expect(read.isError, `${key}: ${textOf(read)}`).toBeFalsy();
        expect(textOf(read)).toContain(body);

        const down = await call(client, "get_object", {
          bucket_name: bucket,
          object_key: key,
          mode: "download",
          local_path: `awkward-back/${i}.txt`,
        });
        expect(down.isError, `${key}: ${textOf(down)}`).toBeFalsy();
        expect(readFileSync(join(dir, `awkward-back/${i}.txt`), "utf8")).toBe(body);
      }
      // An independent client sees exactly these keys: nothing re-encoded, NFC and NFD kept apart.
      const stored = (
        await sdkClient().send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 1000 }))
      ).Contents!.map((o) => o.Key);
      for (const key of KEYS) expect(stored).toContain(key);
    } finally {
      await close();
    }
  }, 60_000);
});
