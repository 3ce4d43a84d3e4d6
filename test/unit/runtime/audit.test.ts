import { describe, expect, test } from "bun:test";
import { auditBytes, auditLine, auditTarget } from "../../../src/runtime/audit.ts";

describe("audit lines", () => {
  test("a key with newlines, quotes and line separators stays inside one line and parses back exactly", () => {
    const key = 'evil\n{"caller":"root","outcome":"ok"}\r\u2028\u2029"\\';
    const line = auditLine(
      { caller: "alice", action: "get_object", bucket: "b", key, outcome: "ok", duration_ms: 3, request_id: 7 },
      new Date("2026-11-24T00:00:00Z"),
    );
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(/[\n\r\u2028\u2029]/);
    expect(JSON.parse(line)).toEqual({
      time: "2026-11-24T00:00:00.000Z",
      caller: "alice",
      action: "get_object",
      bucket: "b",
      key,
      outcome: "ok",
      duration_ms: 3,
      request_id: 7,
    });
  });

  test("the target: bucket, key, prefix and a copy's source with its store", () => {
    expect(auditTarget({ bucket_name: "b", object_key: "k", content: "secret text" }, undefined)).toEqual({
      bucket: "b",
      key: "k",
    });
    expect(auditTarget({ source_bucket: "s", source_prefix: "p/", bucket_name: "b", prefix: "q/" }, "r2")).toEqual({
      bucket: "b",
      prefix: "q/",
      source: "r2:s/p/",
    });
  });

  test("the target from a tool's addresses: a key named anything a schema marks reaches the line; key lists do not", () => {
    const addresses = {
      bucket: ["bucket_name"],
      key: ["target_key", "keys"],
      sourceBucket: [],
      sourceKey: [],
      lists: ["keys"],
    };
    expect(auditTarget({ bucket_name: "b", target_key: "t/k", keys: ["a", "b"] }, undefined, addresses)).toEqual({
      bucket: "b",
      key: "t/k",
    });
    const bulk = { bucket: ["bucket_name"], key: ["prefix"], sourceBucket: [], sourceKey: [], lists: [] };
    expect(auditTarget({ bucket_name: "b", prefix: "logs/" }, undefined, bulk)).toEqual({
      bucket: "b",
      prefix: "logs/",
    });
  });

  test("bytes: the field a tool names (a transfer's size), else a read's window, a bulk job's bytes done; never a described object's size", () => {
    expect(auditBytes({ size: 10 }, "size")).toBe(10);
    expect(auditBytes({ size: 100, returned_bytes: 40 })).toBe(40);
    expect(auditBytes({ size: 100, bytes: 100 })).toBe(100);
    expect(auditBytes({ bytes_done: 5 })).toBe(5);
    expect(auditBytes({ size: 100 })).toBeUndefined();
  });
});
