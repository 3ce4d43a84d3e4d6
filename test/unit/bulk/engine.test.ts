/** The bulk engine's pure parts: safe local names, file/folder clashes, include/exclude, "unchanged", the engine's limits, failures and progress. */
import { describe, expect, test } from "bun:test";
import { type Outcome, runJob } from "../../../src/bulk/engine.ts";
import { pathFilter } from "../../../src/bulk/filters.ts";
import { FileFolderClash, unsafeLocalName } from "../../../src/bulk/local-names.ts";
import { Tally } from "../../../src/bulk/tally.ts";
import { etagMd5, localIsObject, mtimeMetadata, sameAsLocal, sameObject } from "../../../src/bulk/unchanged.ts";
import { ActionableError } from "../../../src/runtime/errors.ts";

describe("unsafeLocalName", () => {
  test("refuses what cannot be a file below the folder, on every platform", () => {
    for (const rel of [
      "",
      "/abs",
      "a//b",
      "a/",
      "../../x",
      "a/../b",
      "../a",
      "a/.",
      "nul\u0000",
      "ctl\u001f",
      `${"n".repeat(256)}`,
      `${"a/".repeat(1600)}x`,
    ]) {
      expect(unsafeLocalName(rel, "linux"), JSON.stringify(rel)).toBeDefined();
    }
    for (const rel of ["a", "a/b/c.txt", "naïve résumé.txt", "CON", "a:b", "x. ", `${"é".repeat(127)}`])
      expect(unsafeLocalName(rel, "linux"), rel).toBeUndefined();
  });
  test("on Windows also reserved names, reserved characters and trailing dots or spaces", () => {
    for (const rel of ["CON", "dir/nul.txt", "COM1", "lpt9.log", "a:b", 'q"', "a\\b", "x?", "end.", "end "])
      expect(unsafeLocalName(rel, "win32"), rel).toBeDefined();
    expect(unsafeLocalName("console/file.txt", "win32")).toBeUndefined();
  });
});

describe("FileFolderClash", () => {
  test("a key that is also another key's folder is refused, whichever comes first", () => {
    const clash = new FileFolderClash();
    expect(clash.claim("a", false)).toBeUndefined();
    expect(clash.claim("a/b", false)).toContain("is a file here");
    expect(clash.claim("c/d", false)).toBeUndefined();
    expect(clash.claim("c", false)).toContain("as a folder");
  });
  test("on a case-insensitive file system, names differing only in case collide", () => {
    const clash = new FileFolderClash();
    expect(clash.claim("Read.me", true)).toBeUndefined();
    expect(clash.claim("read.ME", true)).toContain("case");
    expect(new FileFolderClash().claim("x", false)).toBeUndefined();
  });
});

describe("pathFilter", () => {
  test("a name pattern matches anywhere, a path pattern the whole path, ** crosses folders; exclude wins", () => {
    const f = pathFilter(["*.log", "build/**"], ["build/tmp/**"]);
    expect(["x.log", "a/b/c.log", "build/out.js", "build/a/b.js"].every(f)).toBe(true);
    expect(["x.txt", "src/build/a.js", "build/tmp/x.js"].some(f)).toBe(false);
    expect(pathFilter(undefined, undefined)("anything/at/all")).toBe(true);
  });
});

describe("unchanged", () => {
  const md5 = async () => "0cc175b9c0f1b6a831c399e269772661";
  const obj = (etag: string | null, modifiedMs: number, size = 1) => ({ size, etag, modifiedMs });
  test("a single-part ETag is an MD5: the content decides, not the time", async () => {
    expect(etagMd5('"0CC175B9C0F1B6A831C399E269772661"')).toBe("0cc175b9c0f1b6a831c399e269772661");
    expect(etagMd5('"abc-2"')).toBeUndefined();
    expect(
      await sameAsLocal(obj('"0cc175b9c0f1b6a831c399e269772661"', 0), 1, Date.now(), md5, async () => undefined),
    ).toBe(true);
    expect(
      await sameAsLocal(obj('"ffffffffffffffffffffffffffffffff"', Date.now()), 1, 0, md5, async () => undefined),
    ).toBe(false);
    expect(await sameAsLocal(obj('"0cc175b9c0f1b6a831c399e269772661"', 0, 2), 1, 0, md5, async () => undefined)).toBe(
      false,
    );
  });
  test("a multipart object: the recorded mtime if there is one, else not older than the file", async () => {
    const multipart = obj('"0123456789abcdef0123456789abcdef-3"', 10_000);
    expect(await sameAsLocal(multipart, 1, 5_000, md5, async () => mtimeMetadata(5_000).mtime)).toBe(true);
    expect(await sameAsLocal(multipart, 1, 5_001, md5, async () => mtimeMetadata(5_000).mtime)).toBe(false);
    expect(await sameAsLocal(multipart, 1, 9_000, md5, async () => undefined)).toBe(true);
    expect(await sameAsLocal(multipart, 1, 12_000, md5, async () => undefined)).toBe(false);
    expect(await localIsObject(multipart, 1, 10_400, md5)).toBe(true);
    expect(await localIsObject(multipart, 1, 11_000, md5)).toBe(false);
  });
  test("copies: equal MD5s, or the destination not older", () => {
    expect(sameObject(obj('"0cc175b9c0f1b6a831c399e269772661"', 5), obj('"0cc175b9c0f1b6a831c399e269772661"', 1))).toBe(
      true,
    );
    expect(sameObject(obj('"0cc175b9c0f1b6a831c399e269772661"', 1), obj('"ffffffffffffffffffffffffffffffff"', 5))).toBe(
      false,
    );
    expect(sameObject(obj('"a-2"', 5), obj('"b-2"', 6))).toBe(true);
    expect(sameObject(obj('"a-2"', 6), obj('"b-2"', 5))).toBe(false);
  });
});

async function* numbers(n: number) {
  for (let i = 0; i < n; i++) yield i;
}

describe("runJob", () => {
  const progress: { args: unknown[] }[] = [];
  const tally = () => new Tally({ report: (...args: unknown[]) => progress.push({ args }) }, "job");

  test("at most `limit` actions; a failing item is counted, not fatal; nothing runs in a dry run", async () => {
    const t = tally();
    let ran = 0;
    const end = await runJob<number>({
      items: numbers(50),
      nameOf: (n) => `k${n}`,
      concurrency: 4,
      limit: 10,
      dryRun: false,
      signal: new AbortController().signal,
      tally: t,
      async plan(n): Promise<Outcome | import("../../../src/bulk/engine.ts").Action> {
        if (n % 2 === 0) return { kind: "unchanged", name: `k${n}`, bytes: 1 };
        if (n === 3) throw new ActionableError({ resource: "k3", code: "AccessDenied", message: "no", hint: "ask" });
        return {
          kind: "action",
          name: `k${n}`,
          bytes: 10,
          run: async () => (ran++, { kind: "done", name: `k${n}`, bytes: 10 }),
        };
      },
    });
    expect(end).toBe("limit");
    expect(ran).toBe(10);
    expect(t.counts).toMatchObject({ done: 10, failed: 1 });
    expect(t.problems[0]).toMatchObject({ kind: "failed", name: "k3", code: "AccessDenied" });
    const dry = tally();
    const dryEnd = await runJob<number>({
      items: numbers(5),
      nameOf: String,
      concurrency: 2,
      limit: 100,
      dryRun: true,
      signal: new AbortController().signal,
      tally: dry,
      plan: async (n) => ({
        kind: "action",
        name: String(n),
        bytes: 1,
        run: async () => {
          throw new Error("ran in a dry run");
        },
      }),
    });
    expect(dryEnd).toBe("complete");
    expect(dry.counts.done).toBe(5);
  });

  test("a failing source fails the job once the items in flight are done", async () => {
    async function* broken() {
      yield 1;
      throw new ActionableError({ resource: "s3://b", code: "NoSuchBucket", message: "gone", hint: "list" });
    }
    await expect(
      runJob<number>({
        items: broken(),
        nameOf: String,
        concurrency: 3,
        limit: 10,
        dryRun: false,
        signal: new AbortController().signal,
        tally: tally(),
        plan: async (n) => ({ kind: "unchanged", name: String(n), bytes: 0 }),
      }),
    ).rejects.toThrow("gone");
  });

  test("cancel: no new item starts, the end says so", async () => {
    const controller = new AbortController();
    let started = 0;
    const end = await runJob<number>({
      items: numbers(1000),
      nameOf: String,
      concurrency: 4,
      limit: 1000,
      dryRun: false,
      signal: controller.signal,
      tally: tally(),
      async plan(n) {
        started++;
        if (n === 10) controller.abort();
        return { kind: "unchanged", name: String(n), bytes: 0 };
      },
    });
    expect(end).toBe("cancelled");
    expect(started).toBeLessThan(20);
  });

  test("progress says objects and MiB, and only grows", () => {
    progress.length = 0;
    const t = tally();
    for (let i = 0; i < 3; i++) t.seen();
    t.know(3 * 1024 * 1024);
    t.add({ kind: "done", name: "a", bytes: 1024 * 1024 });
    t.result(false, true);
    const last = progress.at(-1)!.args as [number, number, string, boolean];
    expect(last[2]).toBe("job: 1/3 objects, 1.0/3.0 MiB");
    expect(last[0]).toBeLessThanOrEqual(last[1]);
  });
});
