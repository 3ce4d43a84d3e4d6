/** Arguments as clients send them, before they meet a tool's schema. */
import { expect, test } from "bun:test";
import { withoutNulls } from "../../../src/mcp/sdk-hooks.ts";

test("null arguments are dropped at the top level only", () => {
  expect(withoutNulls({ a: null, b: 1, c: { d: null } })).toEqual({ b: 1, c: { d: null } });
  expect(withoutNulls(undefined)).toBeUndefined();
});
