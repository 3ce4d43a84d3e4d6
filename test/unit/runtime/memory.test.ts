/** Released chunks and the byte budget that bounds what the server holds at once. */
import { describe, expect, test } from "bun:test";
import { ByteBudget, releaseChunks } from "../../../src/runtime/memory.ts";

describe("released chunks", () => {
  test("a chunk that owns its buffer is freed; a slice of a shared buffer and a SharedArrayBuffer view are left whole", () => {
    const own = new Uint8Array(1024).fill(7);
    const shared = new Uint8Array(2048).fill(8);
    const slice = shared.subarray(0, 1024);
    const sab = new Uint8Array(new SharedArrayBuffer(64));
    releaseChunks([own, slice, sab]);
    expect(own.byteLength).toBe(0);
    expect(slice.byteLength).toBe(1024);
    expect(shared[2047]).toBe(8);
    expect(sab.byteLength).toBe(64);
  });
});

test("the byte budget never goes over its limit; a small share never waits behind a large one that does not fit; a cancelled waiter leaves", async () => {
  const budget = new ByteBudget(100);
  const order: string[] = [];
  const a = await budget.reserve(60);
  const b = budget.reserve(60).then((r) => (order.push("b"), r));
  // 4 bytes fit beside a's 60: admitted at once, though b came first and waits.
  const small = await budget.reserve(4);
  order.push("small");
  const aborted = new AbortController();
  const c = budget.reserve(40, aborted.signal).then(
    () => "admitted",
    () => "cancelled",
  );
  const d = budget.reserve(40).then((r) => (order.push("d"), r));
  aborted.abort();
  expect(await c).toBe("cancelled");
  // 60 + 4 + 40 > 100: d waits too; when a goes, b (first in line) fits, then d does not until small goes.
  a();
  const releaseB = await b;
  expect(order).toEqual(["small", "b"]);
  small();
  (await d)();
  releaseB();
  expect(order).toEqual(["small", "b", "d"]);
  const big = await budget.reserve(500); // larger than the whole budget: waits for all of it, then runs
  big();
});
