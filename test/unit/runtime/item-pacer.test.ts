import { expect, test } from "bun:test";
import { itemPacer } from "../../../src/runtime/memory.ts";

const MB = 1024 * 1024;

/** A resident size the test sets, and the collections the pacers ask for. */
function fakeMemory(start: number) {
  const memory = { now: start, collections: 0 };
  return {
    memory,
    probe: {
      rss: () => memory.now,
      collect: () => {
        memory.collections++;
      },
    },
  };
}

test("an item pacer collects after its growth, and a second pacer does not collect again for the same growth", () => {
  const { memory, probe } = fakeMemory(100 * MB);
  const items = itemPacer(10, 1000 * MB, 16 * MB, probe);
  const listing = itemPacer(10, 1000 * MB, 16 * MB, probe);
  const look = (pace: () => void) => {
    for (let i = 0; i < 10; i++) pace();
  };
  memory.now = 110 * MB;
  look(items);
  look(listing);
  expect(memory.collections).toBe(0);
  memory.now = 120 * MB;
  look(items);
  expect(memory.collections).toBe(1);
  memory.now = 118 * MB; // what the collection left
  // The listing grew nothing since that collection: before, it measured from its own start (100 MB) and collected again.
  look(listing);
  expect(memory.collections).toBe(1);
  memory.now = 136 * MB;
  look(listing);
  expect(memory.collections).toBe(2);
});

test("above the floor a pacer collects at every fifth look, counted from the last collection of any pacer", () => {
  const { memory, probe } = fakeMemory(200 * MB);
  const pace = itemPacer(1, 128 * MB, 16 * MB, probe);
  for (let i = 0; i < 4; i++) pace();
  expect(memory.collections).toBe(0);
  pace();
  expect(memory.collections).toBe(1);
});
