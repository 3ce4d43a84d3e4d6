/** The pure pieces behind the hardening and the toolkit, each with the case that would break it. */
import { describe, expect, test } from "bun:test";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { tooBroad } from "../../src/local/allowed.ts";
import { ByteBudget, releaseChunks } from "../../src/runtime/memory.ts";
import { logValue, maskUrlUserinfo, registerSecrets, scrubSecrets } from "../../src/runtime/redact.ts";
import { fitJsonText, fitsResponse, jsonStringBytes } from "../../src/runtime/response-budget.ts";
import { withoutNulls } from "../../src/mcp/sdk-hooks.ts";
import { copyPartSize, copySource } from "../../src/storage/copy.ts";
import { etagMd5 } from "../../src/storage/transfer/integrity.ts";
import { topLevelId } from "../../src/transports/stdio.ts";

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

describe("stdio transport", () => {
  test("finds the top-level id of a cut message, not a nested one", () => {
    expect(topLevelId('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"')).toBe(7);
    expect(topLevelId('{"jsonrpc":"2.0","params":{"id":99,"a":"b"},"id":"abc","method":"x","pad":"')).toBe("abc");
    expect(topLevelId('{"method":"notifications/cancelled","params":{"reason":"')).toBeUndefined();
    expect(topLevelId('{"x":"has \\"id\\": 5 inside","id":3')).toBe(3);
  });
});

describe("secrets", () => {
  test("a secret across the log cut is scrubbed whole, not left with its head", () => {
    const secret = "S3cretValueForTheCut-0123456789";
    registerSecrets(secret);
    const logged = logValue(`${"k".repeat(290)}${secret}`);
    expect(logged).not.toContain(secret.slice(0, 10));
    expect(logValue("line\nforged")).toBe('"line\\nforged"');
  });

  test("encoded forms are scrubbed; userinfo is masked even in what does not parse", () => {
    const token = "tok/en+with=special";
    registerSecrets(token);
    const encoded = encodeURIComponent(token);
    for (const form of [encoded, encoded.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), JSON.stringify(token).slice(1, -1)]) {
      expect(scrubSecrets(`echo ${form} echo`)).not.toContain(form);
    }
    expect(maskUrlUserinfo("http://user:p@ss@exa mple.com/x")).toBe("http://[redacted]@exa mple.com/x");
  });
});

describe("the rest", () => {
  test("too broad: /, home and its ancestors, system dirs and credential folders; project folders pass", () => {
    const home = homedir();
    for (const dir of ["/", home, dirname(home), "/etc", "/etc/ssl", "/usr", "/proc/self", join(home, ".ssh"), "C:\\", "C:\\Windows\\System32"]) {
      expect(tooBroad(dir, home)).toBeDefined();
    }
    for (const dir of [join(home, "projects"), "/usr/src/app", "/var/lib/data", "/tmp/work", "/srv/data"]) expect(tooBroad(dir, home)).toBeUndefined();
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
    const c = budget.reserve(40, aborted.signal).then(() => "admitted", () => "cancelled");
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

  test("null arguments are dropped at the top level only", () => {
    expect(withoutNulls({ a: null, b: 1, c: { d: null } })).toEqual({ b: 1, c: { d: null } });
    expect(withoutNulls(undefined)).toBeUndefined();
  });

  test("copy sources are URL-encoded per segment; copy parts follow S3's rules", () => {
    expect(copySource({ bucket: "b", key: "a b/c+d?.txt", versionId: "v/1" })).toBe("b/a%20b/c%2Bd%3F.txt?versionId=v%2F1");
    expect(copyPartSize(13 * MiB, 12 * MiB)).toBe(6 * MiB);
    expect(copyPartSize(6 * 1024 ** 3, 5 * 1024 ** 3)).toBe(512 * MiB);
    const huge = 5 * 1024 ** 4; // 5 TiB must fit 10,000 parts
    expect(Math.ceil(huge / copyPartSize(huge, 5 * 1024 ** 3))).toBeLessThanOrEqual(10_000);
  });

  test("only single-part, unencrypted-by-KMS ETags are MD5s", () => {
    expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e"')).toBe("d41d8cd98f00b204e9800998ecf8427e");
    expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e-3"')).toBeUndefined();
    expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e"', { sse: "aws:kms" })).toBeUndefined();
    expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e"', { customerKey: "AES256" })).toBeUndefined();
  });
});
