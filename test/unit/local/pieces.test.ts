/**
 * The positional download writer (src/local/pieces.ts) against a real file:
 * pieces in any order, several at once, land where they belong; the sha256
 * and the object's own check see the bytes in order; a failed delivery leaves
 * no write running behind it.
 */
import { expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { type PieceWriter, writePieces } from "../../../src/local/pieces.ts";
import { randomBytes, sha256, tempDir } from "../../helpers/files.ts";

const dir = tempDir("pieces");
const KiB = 1024;

/** `bytes` cut into pieces of `size`, split in two chunks each (as network chunks come). */
function piecesOf(bytes: Uint8Array, size: number): { offset: number; chunks: Uint8Array[] }[] {
  const out = [];
  for (let at = 0; at < bytes.length; at += size) {
    const piece = bytes.subarray(at, Math.min(bytes.length, at + size));
    const half = Math.floor(piece.length / 2);
    out.push({ offset: at, chunks: [piece.subarray(0, half), piece.subarray(half)] });
  }
  return out;
}

/** Records what the object's check is fed, in order. */
function recordingCheck() {
  const seen: Uint8Array[] = [];
  let finished = false;
  return {
    check: { update: (b: Uint8Array) => void seen.push(Uint8Array.from(b)), finish: () => void (finished = true) },
    fed: () => Buffer.concat(seen),
    finished: () => finished,
  };
}

async function write(
  name: string,
  size: number | undefined,
  fill: (w: PieceWriter) => Promise<void>,
  check?: ReturnType<typeof recordingCheck>["check"],
) {
  const handle = await open(join(dir, name), "w+");
  try {
    return await writePieces(handle, { size, fill, check });
  } finally {
    await handle.close();
  }
}

test("pieces delivered backwards and interleaved land at their offsets; sha256 and the check see the bytes in order", async () => {
  const bytes = randomBytes(3 * 1024 * KiB + 123, 5);
  const pieces = piecesOf(bytes, 100 * KiB);
  // Last to first, two "ranges" at once: nothing arrives where the hashed prefix ends until the very end.
  const order = [...pieces].reverse();
  const rec = recordingCheck();
  const result = await write(
    "backwards.bin",
    bytes.length,
    async (w) => {
      await Promise.all(
        [0, 1].map(async (lane) => {
          for (let i = lane; i < order.length; i += 2) await w(order[i]!.offset, order[i]!.chunks);
        }),
      );
    },
    rec.check,
  );
  expect(readFileSync(join(dir, "backwards.bin")).equals(Buffer.from(bytes))).toBe(true);
  expect(result).toEqual({ bytes: bytes.length, sha256: sha256(bytes) });
  expect(rec.fed().equals(Buffer.from(bytes))).toBe(true);
  expect(rec.finished()).toBe(true);
});

test("pieces in order (one stream) are hashed as they come, with an unknown size", async () => {
  const bytes = randomBytes(700 * KiB, 6);
  const rec = recordingCheck();
  const result = await write(
    "in-order.bin",
    undefined,
    async (w) => {
      for (const p of piecesOf(bytes, 64 * KiB)) await w(p.offset, p.chunks);
    },
    rec.check,
  );
  expect(result).toEqual({ bytes: bytes.length, sha256: sha256(bytes) });
  expect(rec.fed().equals(Buffer.from(bytes))).toBe(true);
});

test("a missing piece is a gap, not a short file reported as whole; the check is not finished", async () => {
  const bytes = randomBytes(400 * KiB, 7);
  const rec = recordingCheck();
  const pieces = piecesOf(bytes, 100 * KiB).filter((_, i) => i !== 1);
  const done = write(
    "gap.bin",
    bytes.length,
    async (w) => {
      for (const p of pieces) await w(p.offset, p.chunks);
    },
    rec.check,
  );
  await expect(done).rejects.toThrow(/gap/);
  expect(rec.finished()).toBe(false);
});

test("a piece past the declared size is refused", async () => {
  const done = write("past.bin", 10, async (w) => w(8, [new Uint8Array(5)]));
  await expect(done).rejects.toThrow(/past the object/);
});

test("a failed delivery settles only after its writes, and later writes are refused", async () => {
  let late: PieceWriter | undefined;
  const done = write("failed.bin", 1024 * KiB, async (w) => {
    late = w;
    void w(512 * KiB, [new Uint8Array(256 * KiB)]);
    throw new Error("the store went away");
  });
  await expect(done).rejects.toThrow("the store went away");
  // The write under way finished before the writer gave the file back (and it was closed).
  expect(statSync(join(dir, "failed.bin")).size).toBe(768 * KiB);
  await expect(late!(0, [new Uint8Array(1)])).rejects.toThrow(/stopped/);
});

test("the object's check refusing the whole fails the write", async () => {
  const bytes = randomBytes(64 * KiB, 8);
  const done = write("refused.bin", bytes.length, async (w) => w(0, [bytes]), {
    update: () => {},
    finish: () => {
      throw new Error("IntegrityCheckFailed");
    },
  });
  await expect(done).rejects.toThrow("IntegrityCheckFailed");
});

test("a large download is hashed on another thread from the file: the same sha256, the check still fed in order", async () => {
  const bytes = new Uint8Array(require("node:crypto").randomBytes(65 * 1024 * KiB + 77));
  const pieces = piecesOf(bytes, 1024 * KiB);
  for (const withCheck of [false, true]) {
    const rec = recordingCheck();
    const result = await write(
      `large-${withCheck}.bin`,
      bytes.length,
      async (w) => {
        // Four "ranges" at once, each from its own quarter.
        const quarter = Math.ceil(pieces.length / 4);
        await Promise.all(
          [0, 1, 2, 3].map(async (lane) => {
            for (const p of pieces.slice(lane * quarter, (lane + 1) * quarter)) await w(p.offset, p.chunks);
          }),
        );
      },
      withCheck ? rec.check : undefined,
    );
    expect(result).toEqual({ bytes: bytes.length, sha256: sha256(bytes) });
    if (withCheck) expect(rec.fed().equals(Buffer.from(bytes))).toBe(true);
  }
  // Two 65 MiB files written and hashed: 4-5 s on a quiet two-core machine, so well past bun's 5 s default.
}, 120_000);

test("a large download that fails stops its hashing thread", async () => {
  const done = write("large-failed.bin", 100 * 1024 * KiB, async (w) => {
    await w(0, [new Uint8Array(1024 * KiB)]);
    throw new Error("cut");
  });
  await expect(done).rejects.toThrow("cut");
});

test("without a sha256 and without a check (a bulk download of a multipart object): pieces in any order land whole, and a gap is still an error", async () => {
  const bytes = randomBytes(70 * 1024 * KiB + 5, 11); // past the hash thread's threshold: no thread starts either
  const pieces = piecesOf(bytes, 256 * KiB).reverse();
  const handle = await open(join(dir, "nohash.bin"), "w+");
  try {
    const out = await writePieces(
      handle,
      { size: bytes.length, fill: async (w) => void (await Promise.all(pieces.map((p) => w(p.offset, p.chunks)))) },
      undefined,
      false,
    );
    expect(out).toEqual({ bytes: bytes.length, sha256: "" });
  } finally {
    await handle.close();
  }
  expect(sha256(readFileSync(join(dir, "nohash.bin")))).toBe(sha256(bytes));
  const gap = await open(join(dir, "nohash-gap.bin"), "w+");
  try {
    const missing = pieces.slice(1);
    await expect(
      writePieces(
        gap,
        { size: bytes.length, fill: async (w) => void (await Promise.all(missing.map((p) => w(p.offset, p.chunks)))) },
        undefined,
        false,
      ),
    ).rejects.toThrow("gap");
  } finally {
    await gap.close();
  }
}, 60_000);

test("a large download's own check (MD5 of its ETag, checksums) moves to the hashing thread when pieces come out of order, and still refuses a body that breaks it", async () => {
  const { orderedCheck } = await import("../../../src/storage/transfer/integrity.ts");
  const { createHash } = await import("node:crypto");
  const { crc32 } = await import("node:zlib");
  const bytes = Buffer.from(require("node:crypto").randomBytes(65 * 1024 * KiB + 3));
  const pieces = piecesOf(bytes, 1024 * KiB).reverse();
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(bytes) >>> 0);
  const promises = (md5: string) => ({
    md5,
    checksums: [
      ["sha256", createHash("sha256").update(bytes).digest("base64")],
      ["sha1", createHash("sha1").update(bytes).digest("base64")],
      ["crc32", crc.toString("base64")],
    ] as [string, string][],
  });
  /** Writes the pieces in `order` with a check whose MD5 is `md5`; `fedHere`: the bytes this thread fed it. */
  const run = async (name: string, md5: string, order: typeof pieces, withSha256: boolean, fedHere: number) => {
    const check = orderedCheck(promises(md5), { bucket: "b", key: "k" })!;
    let fed = 0;
    const counted = { ...check, update: (b: Uint8Array) => void ((fed += b.length), check.update(b)) };
    const handle = await open(join(dir, name), "w+");
    try {
      const fill = async (w: PieceWriter) => {
        for (const p of order) await w(p.offset, p.chunks);
      };
      return await writePieces(handle, { size: bytes.length, fill, check: counted }, undefined, withSha256);
    } finally {
      await handle.close();
      expect(fed).toBe(fedHere);
    }
  };
  const right = createHash("md5").update(bytes).digest("hex");
  const wrong = `${right.slice(0, 31)}${right.endsWith("0") ? "1" : "0"}`;
  const inOrder = [...pieces].reverse();
  // No sha256 wanted (a bulk download's file), out of order from the first piece: a thread for the check alone.
  expect(await run("checked.bin", right, pieces, false, 0)).toEqual({ bytes: bytes.length, sha256: "" });
  await expect(run("broken.bin", wrong, pieces, false, 0)).rejects.toThrow(/MD5 .* is not the object's ETag/);
  // No sha256 wanted, in order: fed here, no thread.
  expect(await run("in-order.bin", right, inOrder, false, bytes.length)).toEqual({ bytes: bytes.length, sha256: "" });
  // One stream: fed here, from memory, beside the thread's sha256.
  expect(await run("stream.bin", right, inOrder, true, bytes.length)).toEqual({
    bytes: bytes.length,
    sha256: sha256(bytes),
  });
  // The first piece in order, then ranges out of order: handed to the thread after the first piece.
  const ranged = [inOrder[0]!, ...inOrder.slice(1).reverse()];
  expect(
    await run(
      "ranged.bin",
      right,
      ranged,
      true,
      inOrder[0]!.chunks.reduce((n, c) => n + c.length, 0),
    ),
  ).toEqual({
    bytes: bytes.length,
    sha256: sha256(bytes),
  });
  await expect(run("ranged-broken.bin", wrong, ranged, true, 1024 * KiB)).rejects.toThrow(/MD5 .* is not/);
}, 120_000);
