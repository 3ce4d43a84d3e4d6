/**
 * A match kept from a window does not keep the window: its text and context
 * lines are copies, not slices of the decoded window (a slice keeps the whole
 * string it was cut from alive in JavaScriptCore).
 */
import { heapSize } from "bun:jsc";
import { expect, test } from "bun:test";
import { finderFor, LineSearch } from "../../../src/content/line-search.ts";

test("200 windows of 1 MiB with a match each: the matches hold kilobytes, not the 200 MB of windows", () => {
  const search = new LineSearch({ find: finderFor("needle", false, false), context: 2, after: 0, max: 1000 });
  const filler = `${"x".repeat(99)}\n`.repeat(10_000);
  Bun.gc(true);
  const before = heapSize();
  for (let i = 0; i < 200; i++) {
    // A fresh string per window (as the decoder makes them), the match in its middle.
    search.push(`${filler.slice(i)}line ${i} needle here\n${filler}`.toLowerCase());
  }
  search.end();
  Bun.gc(true);
  expect(search.matches).toHaveLength(200);
  expect(search.matches[7]!.text).toBe("line 7 needle here");
  expect(search.matches[7]!.before).toHaveLength(2);
  expect(heapSize() - before).toBeLessThan(20 * 1024 * 1024);
});
