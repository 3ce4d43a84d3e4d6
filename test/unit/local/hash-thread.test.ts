/**
 * The hashing thread (src/local/hash-thread.ts) against a real file written as
 * a download writes it: the digests of every algorithm it was given, one
 * added part way (computed from the file's first byte, not from where the
 * others were), and a failure when the file is shorter than reported.
 */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { startFileHasher } from "../../../src/local/hash-thread.ts";
import { randomBytes, tempDir } from "../../helpers/files.ts";

const dir = tempDir("hash-thread");
const MiB = 1024 * 1024;

test("an algorithm added part way is computed over the whole file, beside the ones given at the start", async () => {
  const bytes = Buffer.from(randomBytes(5 * MiB + 17, 3));
  const handle = await open(join(dir, "lanes.bin"), "w+");
  const hasher = startFileHasher(handle.fd, ["sha256"]);
  try {
    // Written and reported in three steps; md5 and crc32 join after the first.
    await handle.write(bytes, 0, 2 * MiB, 0);
    hasher.upTo(2 * MiB);
    hasher.add(["md5", "crc32"]);
    await handle.write(bytes, 2 * MiB, 2 * MiB, 2 * MiB);
    hasher.upTo(4 * MiB);
    await handle.write(bytes, 4 * MiB, bytes.length - 4 * MiB, 4 * MiB);
    const hex = await hasher.digests(bytes.length);
    expect(hex).toEqual({
      sha256: createHash("sha256").update(bytes).digest("hex"),
      md5: createHash("md5").update(bytes).digest("hex"),
      crc32: (crc32(bytes) >>> 0).toString(16).padStart(8, "0"),
    });
  } finally {
    await hasher.stop();
    await handle.close();
  }
});

test("a file shorter than the bytes reported fails the digests instead of hashing less", async () => {
  const handle = await open(join(dir, "short.bin"), "w+");
  const hasher = startFileHasher(handle.fd, ["sha256"]);
  try {
    await handle.write(Buffer.alloc(MiB, 1), 0, MiB, 0);
    await expect(hasher.digests(2 * MiB)).rejects.toThrow(/the file ended at/);
  } finally {
    await hasher.stop();
    await handle.close();
  }
});
