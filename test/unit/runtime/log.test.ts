import { expect, test } from "bun:test";
import { parseLogDirectives } from "../../../src/runtime/log.ts";

const level = (s: string) => {
  const r = parseLogDirectives(s);
  if ("error" in r) throw new Error(r.error);
  return r.level;
};

test("the default directive logs at info", () => expect(level("store_mcp_server=info")).toBe("info"));
test("a bare level applies to us", () => expect(level("debug")).toBe("debug"));
test("our target beats the bare level, in any order", () => {
  expect(level("warn,store_mcp_server=trace")).toBe("trace");
  expect(level("store_mcp_server=trace,warn")).toBe("trace");
});
test("other targets are accepted and ignored", () => {
  expect(level("aws_sdk=debug,info")).toBe("info");
  expect(level("hyper=trace")).toBe("error");
});
test("module paths below our target and hyphenated spelling count", () => {
  expect(level("store_mcp_server::tools=debug")).toBe("debug");
  expect(level("store-mcp-server=warn")).toBe("warn");
});
test("off and upper case", () => {
  expect(level("off")).toBe("off");
  expect(level("DEBUG")).toBe("debug");
});
test("an unknown level is an error that lists the levels", () => {
  const r = parseLogDirectives("store_mcp_server=loud");
  expect("error" in r && r.error).toContain("error, warn, info, debug, trace");
  expect("error" in parseLogDirectives("=debug")).toBe(true);
});
