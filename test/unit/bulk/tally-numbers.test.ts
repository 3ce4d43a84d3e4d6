import { describe, expect, test } from "bun:test";
import { grouped } from "../../../src/bulk/tally.ts";

describe("grouped: a job's counts as toLocaleString('en-US') writes them", () => {
  test("every width, both signs, and fractions cut", () => {
    for (const x of [0, 7, 42, 999, 1000, 1204, 99_999, 100_000, 1_234_567, 12_345_678_901, -5, -1000, -1_234_567]) {
      expect(grouped(x)).toBe(x.toLocaleString("en-US"));
    }
    expect(grouped(1234.9)).toBe("1,234");
  });
});
