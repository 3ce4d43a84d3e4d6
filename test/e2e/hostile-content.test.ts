/**
 * Objects crafted to hurt the server that reads them (hardening, fourth
 * round), through the compiled binary against Ceph: a zip member that
 * declares 100 bytes and inflates to 256 MiB stops at its declared size (no
 * file, no temp file); a gzip bomb in search_objects and inspect_object is
 * bounded with a clear answer; Parquet footers with huge lengths or counts
 * are refused by inspect_object and query_objects without allocating them.
 * The server's peak resident size stays flat through all of it.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { crc32, deflateRawSync, gzipSync } from "node:zlib";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
let bucket: string;
let dir: string;
let server: Awaited<ReturnType<typeof connectBinary>>;
const put = (Key: string, Body: Uint8Array | string) =>
  sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key, Body }));
const peakMb = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))?.[1]) / 1024;

/** A zip of one deflated member whose headers declare `declared` bytes (its data inflates to `data`'s length). */
function zipDeclaring(name: string, data: Uint8Array, declared: number): Uint8Array {
  const deflated = deflateRawSync(data, { level: 9 });
  const fileName = Buffer.from(name);
  /** A header: its signature, then version(s), method 8, CRC-32, sizes and the name's length at `at` (the local and central headers differ only by 4). */
  const header = (size: number, signature: number, versions: number[], at: number) => {
    const b = Buffer.alloc(size);
    b.writeUInt32LE(signature, 0);
    versions.forEach((v, i) => b.writeUInt16LE(v, 4 + 2 * i));
    b.writeUInt16LE(8, at - 6);
    b.writeUInt32LE(crc32(data) >>> 0, at);
    b.writeUInt32LE(deflated.length, at + 4);
    b.writeUInt32LE(declared, at + 8);
    b.writeUInt16LE(fileName.length, at + 12);
    return b;
  };
  const local = header(30, 0x04034b50, [20], 14);
  const central = header(46, 0x02014b50, [20, 20], 16);
  const cdOffset = local.length + fileName.length + deflated.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + fileName.length, 12);
  end.writeUInt32LE(cdOffset, 16);
  return Buffer.concat([local, fileName, deflated, central, fileName, end]);
}

/** "PAR1", `body`, then a footer length field claiming `length` and "PAR1". */
function parquetClaiming(body: Uint8Array, length: number): Uint8Array {
  const tail = Buffer.alloc(8);
  tail.writeUInt32LE(length >>> 0, 0);
  tail.write("PAR1", 4);
  return Buffer.concat([Buffer.from("PAR1"), body, tail]);
}

beforeAll(async () => {
  requireBinary();
  bucket = await freshBucket("hostile");
  dir = tempDir("hostile");
  await put("bomb.zip", zipDeclaring("small.txt", new Uint8Array(256 * MiB), 100));
  // 1 GiB of newlines, gzip'd to about a megabyte.
  await put("logs/bomb.log.gz", gzipSync(new Uint8Array(1024 * MiB).fill(10), { level: 9 }));
  await put("logs/real.log", "an ERROR here\n");
  // A footer length past the file's end; one that claims most of a 24 MiB object; a footer whose schema list claims
  // 4 billion elements (thrift compact: version 1, then a list of structs with a varint size).
  await put("past-end.parquet", parquetClaiming(new Uint8Array(100), 0xfffffff0));
  await put("huge-footer.parquet", parquetClaiming(new Uint8Array(24 * MiB).fill(0x19), 20 * MiB));
  const thrift = Buffer.from([0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x18, 0x00]);
  await put("counts.parquet", parquetClaiming(thrift, thrift.length));
  server = await connectBinary({ env: { ...s3Env(), STORE_CALL_BUDGET_SECONDS: "0" }, args: ["--allowed-dir", dir] });
}, 120_000);
afterAll(() => server?.close());

describe("archives and gzip", () => {
  test("a zip member declaring 100 bytes stops at 100, in download and read mode: no file, no temp file", async () => {
    const path = join(dir, "member.txt");
    const started = performance.now();
    const r = await call(server.client, "get_object", {
      bucket_name: bucket,
      object_key: "bomb.zip",
      archive_member: "small.txt",
      mode: "download",
      local_path: path,
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("UnreadableArchive");
    expect(textOf(r)).toContain("declares");
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
    // Stopped at the first inflated chunk past 100 bytes, not after 256 MiB.
    expect(performance.now() - started).toBeLessThan(3_000);
    const read = await call(server.client, "get_object", {
      bucket_name: bucket,
      object_key: "bomb.zip",
      archive_member: "small.txt",
      max_content_size: 1000,
    });
    expect(read.isError).toBe(true);
    expect(textOf(read)).toContain("declares");
  }, 60_000);

  test("a gzip bomb: search_objects stops inflating it at its bound (too large) and finds the real match; inspect_object answers from a bounded sample", async () => {
    // A 1 MiB object bound: inflating stops at 20 MiB, not at the gigabyte.
    const started = performance.now();
    const found = await call(server.client, "search_objects", {
      bucket_name: bucket,
      prefix: "logs/",
      pattern: "ERROR",
      max_object_bytes: 1024 * 1024,
    });
    expect(found.isError, textOf(found)).toBeFalsy();
    expect(found.structuredContent!.objects_with_matches).toEqual([{ key: "logs/real.log", matching_lines: 1 }]);
    expect(found.structuredContent!.objects_skipped.too_large).toBe(1);
    expect(performance.now() - started).toBeLessThan(10_000);
    const inspected = await call(server.client, "inspect_object", {
      bucket_name: bucket,
      object_key: "logs/bomb.log.gz",
    });
    expect(inspected.isError, textOf(inspected)).toBeFalsy();
    expect(inspected.structuredContent!.compression).toBe("gzip");
    // A megabyte or two of the object read, not the gigabyte it inflates to.
    expect(inspected.structuredContent!.bytes_read).toBeLessThan(4 * MiB);
    expect(peakMb()).toBeLessThan(250);
  }, 60_000);
});

describe("Parquet footers", () => {
  for (const key of ["past-end.parquet", "huge-footer.parquet", "counts.parquet"]) {
    test(`${key}: inspect_object and query_objects refuse it with a clear error, nothing allocated to its claims`, async () => {
      const inspected = await call(server.client, "inspect_object", { bucket_name: bucket, object_key: key });
      expect(inspected.isError).toBe(true);
      expect(textOf(inspected)).toContain("UnreadableObject");
      const queried = await call(server.client, "query_objects", {
        bucket_name: bucket,
        keys: [key],
        sql: "SELECT count(*) FROM objects",
      });
      expect(queried.isError).toBe(true);
      expect(textOf(queried)).toMatch(/UnreadableObject|QueryFailed|QueryTooLarge/);
      expect(textOf(queried)).not.toContain("InternalError");
      expect(peakMb()).toBeLessThan(250);
      // The server serves on.
      expect((await call(server.client, "list_objects", { bucket_name: bucket })).isError).toBeFalsy();
    }, 60_000);
  }
});
