/** JSON sizes and cuts that keep every answer within what a client can read. */
import { describe, expect, test } from "bun:test";
import { fitJsonText, fitsResponse, jsonStringBytes } from "../../../src/runtime/response-budget.ts";

const MiB = 1024 * 1024;

describe("response budget", () => {
  test("JSON sizes count escapes and multi-byte characters exactly", () => {
    for (const text of ["plain", 'q"uote\\', "\u0001\u001f\n\t", "é✓😀", "\ud800lone"]) {
      expect(jsonStringBytes(text)).toBe(Buffer.byteLength(JSON.stringify(text)));
    }
  });

  test("a cut fits the budget, keeps surrogate pairs whole, and leaves short texts alone", () => {
    const text = "a😀".repeat(1000);
    const { text: cut, cut: was } = fitJsonText(text, 1001);
    expect(was).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(cut))).toBeLessThanOrEqual(1001);
    expect(cut.endsWith("\ud83d")).toBe(false);
    expect(fitJsonText("short", 100)).toEqual({ text: "short", cut: false });
    const controls = "\u0001".repeat(1000);
    expect(Buffer.byteLength(JSON.stringify(fitJsonText(controls, 602).text))).toBeLessThanOrEqual(602);
  });

  test("fitsResponse measures what a large escaped text really takes", () => {
    const result = { content: [{ type: "text", text: "\u0001".repeat(1_100_000) }] };
    expect(fitsResponse(result, 6 * MiB)).toBe(false);
    expect(fitsResponse({ content: [{ type: "text", text: "x".repeat(1_100_000) }] }, 6 * MiB)).toBe(true);
  });
});
