/** PiecePipe (storage/piece-pipe.ts): pieces in any order out by position, only once verified, the last bytes only after the check passed, memory bounded. */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { PiecePipe } from "../../../../src/storage/transfer/piece-pipe.ts";

const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

/** An MD5 check over the bytes fed in order, as the download's would be. */
function md5Check(expected: string) {
  const hash = createHash("md5");
  return {
    update: (b: Uint8Array) => void hash.update(b),
    finish: () => {
      if (hash.digest("hex") !== expected) throw new Error("BadDigest");
    },
  };
}

async function readAll(pipe: PiecePipe, partSize: number): Promise<Uint8Array> {
  const out = new Uint8Array(pipe.size);
  // Parts read at once, as the uploader's workers do.
  await Promise.all(
    Array.from({ length: Math.ceil(pipe.size / partSize) }, async (_, part) => {
      for (let at = part * partSize; at < Math.min(pipe.size, (part + 1) * partSize); ) {
        const n = await pipe.readAt(out.subarray(at, Math.min(pipe.size, (part + 1) * partSize)), at);
        if (n === 0) break;
        at += n;
      }
    }),
  );
  return out;
}

describe("PiecePipe", () => {
  test("pieces written backwards and in parallel come out whole, each byte once", async () => {
    const source = bytes(100_000);
    const pipe = new PiecePipe(source.length, 1 << 20, md5Check(createHash("md5").update(source).digest("hex")));
    const writes = [];
    for (let at = 90_000; at >= 0; at -= 10_000)
      writes.push(pipe.write(at, [source.slice(at, at + 4000), source.slice(at + 4000, at + 10_000)]));
    const [read] = await Promise.all([readAll(pipe, 30_000), ...writes]);
    expect(Buffer.compare(read, source)).toBe(0);
  });

  test("a check that fails at the end keeps the last bytes from every reader", async () => {
    const source = bytes(20_000);
    const pipe = new PiecePipe(source.length, 1 << 20, md5Check("0".repeat(32)));
    await pipe.write(0, [source.slice(0, 10_000)]);
    const first = new Uint8Array(10_000);
    expect(await pipe.readAt(first, 0)).toBe(10_000);
    await pipe.write(10_000, [source.slice(10_000)]);
    await expect(pipe.readAt(new Uint8Array(10_000), 10_000)).rejects.toThrow("BadDigest");
  });

  test("over the limit pieces wait, in order too (a near store's one stream); the one that extends the prefix goes in when a reader waits for it", async () => {
    const source = bytes(40_000);
    const pipe = new PiecePipe(source.length, 15_000, undefined);
    await pipe.write(0, [source.slice(0, 10_000)]);
    await pipe.write(10_000, [source.slice(10_000, 20_000)]);
    let third = false;
    const held = pipe.write(20_000, [source.slice(20_000, 30_000)]).then(() => (third = true));
    await Bun.sleep(10);
    expect(third).toBe(false); // nobody reads: 20,000 bytes held, the next piece waits
    const out = new Uint8Array(source.length);
    expect(await pipe.readAt(out.subarray(0, 10_000), 0)).toBe(10_000);
    await held;
    expect(third).toBe(true);
    // Past the prefix over the limit: waits even while a reader starves for the prefix's next bytes...
    const later = bytes(10_000, 9);
    const pipe2 = new PiecePipe(40_000, 15_000, undefined);
    await pipe2.write(20_000, [later]);
    await pipe2.write(30_000, [later]);
    let ahead = false;
    void pipe2.write(10_000, [later]).then(() => (ahead = true));
    const starving = pipe2.readAt(new Uint8Array(5), 0);
    await Bun.sleep(10);
    expect(ahead).toBe(false);
    // ...and the piece at the prefix goes in at once for that reader.
    await pipe2.write(0, [source.slice(0, 10_000)]);
    expect(await starving).toBe(5);
  });

  test("a failure reaches waiting readers and writers", async () => {
    const pipe = new PiecePipe(10, 1, undefined);
    const reading = pipe.readAt(new Uint8Array(5), 0);
    pipe.fail(new Error("source broke"));
    await expect(reading).rejects.toThrow("source broke");
    await expect(pipe.write(0, [new Uint8Array(5)])).rejects.toThrow("source broke");
  });
  test("takeAt hands the held chunks over in order, not copied, once verified, each byte once", async () => {
    const source = bytes(50_000, 7);
    const pipe = new PiecePipe(source.length, 1 << 20, undefined);
    const chunks = [source.slice(0, 20_000), source.slice(20_000, 30_000), source.slice(30_000)];
    const first = pipe.takeAt(0, Infinity);
    // The later piece first: still nothing to hand over before the prefix arrives.
    await pipe.write(30_000, [chunks[2]!]);
    await pipe.write(0, [chunks[0]!, chunks[1]!]);
    const taken = [await first];
    for (let at = taken[0]!.length; at < source.length; at += taken.at(-1)!.length)
      taken.push(await pipe.takeAt(at, Infinity));
    // The very buffers written, in order.
    expect(taken.map((t) => t.buffer)).toEqual(chunks.map((c) => c.buffer));
    expect(Buffer.concat(taken).equals(Buffer.from(source))).toBe(true);
    expect((await pipe.takeAt(source.length, Infinity)).length).toBe(0);
    // A cap takes part of a chunk: the rest follows from where it stopped.
    const capped = new PiecePipe(10, 1 << 20, undefined);
    await capped.write(0, [bytes(10, 3)]);
    expect([...(await capped.takeAt(0, 4)), ...(await capped.takeAt(4, 100))]).toEqual([...bytes(10, 3)]);
  });
  test("starvedShare is the share of the time since it was last asked that a reader waited for the very next bytes", async () => {
    const pipe = new PiecePipe(30, 1 << 20, undefined);
    pipe.starvedShare();
    // Nobody reads: nobody starves.
    await Bun.sleep(40);
    expect(pipe.starvedShare()).toBe(0);
    // A reader waits for byte 0 the whole time.
    const first = pipe.takeAt(0, Infinity);
    await Bun.sleep(40);
    expect(pipe.starvedShare()).toBeGreaterThan(0.8);
    // Then waits about half the time: the wait still going on counts up to now, and from now on. The share is
    // checked against the times this test measured (a loaded machine's sleeps run long, and unevenly).
    const asked = performance.now();
    await Bun.sleep(40);
    await pipe.write(0, [bytes(10, 1)]);
    const fed = performance.now();
    await first;
    await Bun.sleep(40);
    const half = pipe.starvedShare();
    const waited = (fed - asked) / (performance.now() - asked);
    expect(waited).toBeGreaterThan(0.1);
    expect(waited).toBeLessThan(0.9);
    expect(Math.abs(half - waited)).toBeLessThan(0.05);
    // A reader waiting past bytes that have not arrived yet is not starving for the next ones: a later part.
    const later = pipe.takeAt(20, Infinity);
    await Bun.sleep(40);
    expect(pipe.starvedShare()).toBe(0);
    await pipe.write(10, [bytes(20, 2)]);
    expect((await later).length).toBe(10);
  });
});
