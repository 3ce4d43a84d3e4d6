/** inParallel (storage/ranges.ts): ranges cover the object once; more run at once only while the reader wants more, never past the limit. */
import { expect, test } from "bun:test";
import { inParallel, RANGE_SIZE } from "../../src/storage/transfer/ranges.ts";

async function run(parallel: number, initial: number, wantsMore: () => boolean) {
  const total = RANGE_SIZE * 20 + 5;
  const seen: [number, number][] = [];
  let running = 0;
  let most = 0;
  await inParallel(
    3,
    total,
    async (start, end) => {
      most = Math.max(most, ++running);
      await Bun.sleep(2);
      seen.push([start, end]);
      running--;
    },
    new AbortController(),
    parallel,
    initial,
    wantsMore,
  );
  seen.sort((a, b) => a[0] - b[0]);
  let covered = 3;
  for (const [start, end] of seen) {
    expect(start).toBe(covered);
    covered = end + 1;
  }
  expect(covered).toBe(total);
  return most;
}

test("a reader that never waits keeps the ranges at their initial number", async () => {
  expect(await run(12, 1, () => false)).toBe(1);
  expect(await run(12, 2, () => false)).toBe(2);
});

test("a reader that waits gets one more range each time one ends, up to the limit", async () => {
  expect(await run(5, 2, () => true)).toBe(5);
  let asked = 0;
  // Wanting more only twice: two more than the initial two.
  expect(await run(12, 2, () => ++asked <= 2)).toBe(4);
});
