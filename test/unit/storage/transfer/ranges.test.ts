/** inParallel (storage/ranges.ts): ranges cover the object once; more run at once only while the reader wants more, never past the limit; a resumed download's spans are only what it lacks. */
import { expect, test } from "bun:test";
import { inParallel, missingSpans, RANGE_SIZE } from "../../../../src/storage/transfer/ranges.ts";

async function run(parallel: number, initial: number, wantsMore: () => boolean) {
  const total = RANGE_SIZE * 20 + 5;
  const seen: [number, number][] = [];
  let running = 0;
  let most = 0;
  await inParallel(
    [[3, total]],
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

test("missingSpans: the gaps of what a resumed download has, within [from, total)", () => {
  expect(missingSpans(10, 100)).toEqual([[10, 100]]);
  expect(
    missingSpans(10, 100, [
      [20, 30],
      [50, 60],
    ]),
  ).toEqual([
    [10, 20],
    [30, 50],
    [60, 100],
  ]);
  expect(
    missingSpans(10, 100, [
      [0, 15],
      [90, 120],
    ]),
  ).toEqual([[15, 90]]);
  expect(missingSpans(10, 100, [[10, 100]])).toEqual([]);
  expect(
    missingSpans(10, 100, [
      [5, 40],
      [40, 100],
    ]),
  ).toEqual([]);
});

test("inParallel over several spans runs each in RANGE_SIZE steps and nothing between them", async () => {
  const seen: [number, number][] = [];
  await inParallel(
    [
      [0, RANGE_SIZE + 1],
      [3 * RANGE_SIZE, 3 * RANGE_SIZE + 7],
    ],
    async (start, end) => void seen.push([start, end]),
    new AbortController(),
    4,
  );
  expect(seen.sort((a, b) => a[0] - b[0])).toEqual([
    [0, RANGE_SIZE - 1],
    [RANGE_SIZE, RANGE_SIZE],
    [3 * RANGE_SIZE, 3 * RANGE_SIZE + 6],
  ]);
});
