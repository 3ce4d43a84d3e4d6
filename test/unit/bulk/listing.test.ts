/**
 * listAll (bulk/listing.ts): the level below the prefix with delimiter "/",
 * its folders listed ahead at once, read in key order. Against a store in
 * memory that pages, groups and resumes as S3 does (ordering by UTF-8 bytes),
 * so every order and resume case can be checked against a flat listing; the
 * bulk e2e tests run it against Ceph.
 */
import { describe, expect, test } from "bun:test";
import { listAll, listFlat } from "../../../src/bulk/listing.ts";
import type { ListObjectsRequest, ObjectInfo, ObjectPage, Storage } from "../../../src/storage/index.ts";

const utf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** ListObjectsV2 over a key list: prefix, delimiter, StartAfter, continuation tokens, pages of maxKeys (keys and folders count). */
function memoryStore(
  keys: string[],
  opts: { ignoreDelimiter?: boolean; failUnder?: string; pageSize?: number; folderBeforeMarker?: boolean } = {},
) {
  const sorted = [...new Set(keys)].sort(utf8);
  const requests: ListObjectsRequest[] = [];
  let inFlight = 0;
  let most = 0;
  const storage = {
    async listObjects(req: ListObjectsRequest, signal?: AbortSignal): Promise<ObjectPage> {
      requests.push(req);
      inFlight++;
      most = Math.max(most, inFlight);
      await Bun.sleep(1);
      inFlight--;
      signal?.throwIfAborted();
      const prefix = req.prefix ?? "";
      if (opts.failUnder && prefix.startsWith(opts.failUnder))
        throw Object.assign(new Error("boom"), { code: "InternalError" });
      const after = req.continuationToken ?? req.startAfter;
      const entries: { key: string; folder?: boolean }[] = [];
      for (const key of sorted) {
        if (!key.startsWith(prefix)) continue;
        const rest = key.slice(prefix.length);
        const cut = req.delimiter && !opts.ignoreDelimiter ? rest.indexOf(req.delimiter) : -1;
        const entry = cut >= 0 ? { key: prefix + rest.slice(0, cut + 1), folder: true } : { key };
        // AWS names a folder that still has keys after StartAfter; Ceph compares the folder's own name with it.
        if (
          after !== undefined &&
          utf8(entry.folder && !(opts.folderBeforeMarker && req.startAfter !== undefined) ? key : entry.key, after) <= 0
        )
          continue;
        if (entries.at(-1)?.key === entry.key) continue;
        entries.push(entry);
      }
      const max = Math.min(req.maxKeys, opts.pageSize ?? req.maxKeys);
      const page = entries.slice(0, max);
      const truncated = entries.length > max;
      const last = page.at(-1);
      // A folder's token must skip all of its keys: the last key below it.
      const token = !truncated
        ? null
        : last!.folder
          ? sorted.filter((k) => k.startsWith(last!.key)).at(-1)!
          : last!.key;
      return {
        objects: page
          .filter((e) => !e.folder)
          .map((e) => ({ key: e.key, size: e.key.length, last_modified: null, etag: null, storage_class: null })),
        common_prefixes: page.filter((e) => e.folder).map((e) => e.key),
        is_truncated: truncated,
        next_continuation_token: token,
      };
    },
  } as unknown as Storage;
  return { storage, requests, most: () => most };
}

async function collect(it: AsyncIterable<ObjectInfo>, limit = Infinity): Promise<string[]> {
  const out: string[] = [];
  for await (const o of it) {
    out.push(o.key);
    if (out.length >= limit) break;
  }
  return out;
}

const tree = [
  "p/a.txt",
  "p/a/x",
  "p/a/y/z",
  "p/a-b",
  "p/a.b/c",
  "p/b",
  "p/😀/1",
  "p/\uFFFD/2",
  "p/é/3",
  "p/z",
  "p/zz/",
  "p/zz/inner",
  ...Array.from({ length: 2500 }, (_, i) => `p/big/${String(i).padStart(5, "0")}`),
  ...Array.from({ length: 30 }, (_, i) => `p/f${i}/k`),
  "q/outside",
];
const signal = () => new AbortController().signal;

describe("listAll", () => {
  test("gives exactly the flat listing, in S3's byte order, with many folders listed at once", async () => {
    const flat = await collect(listFlat(memoryStore(tree).storage, "b", "p/", signal()));
    expect(flat.length).toBe(tree.length - 1);
    const store = memoryStore(tree);
    expect(await collect(listAll(store.storage, "b", "p/", signal()))).toEqual(flat);
    expect(store.most()).toBeGreaterThan(2);
    expect(store.requests.some((r) => r.delimiter === "/")).toBe(true);
  });

  test("resumes after any key (at the top, inside a folder, on a folder's last key, before everything), whether or not the store names the key's folder", async () => {
    const flat = await collect(listFlat(memoryStore(tree).storage, "b", "p/", signal()));
    for (const folderBeforeMarker of [false, true]) {
      for (const after of [
        "p/a.txt",
        "p/a/x",
        "p/big/01234",
        "p/big/02499",
        "p/f9/k",
        "p/😀/1",
        "p/",
        "p/zz/inner",
        "p/a/y/z",
      ]) {
        const resumed = await collect(
          listAll(memoryStore(tree, { folderBeforeMarker }).storage, "b", "p/", signal(), after),
        );
        expect([folderBeforeMarker, after, resumed]).toEqual([
          folderBeforeMarker,
          after,
          flat.filter((k) => utf8(k, after) > 0),
        ]);
      }
    }
  });

  test("small pages at the top level, and a store that ignores the delimiter, give the same", async () => {
    const flat = await collect(listFlat(memoryStore(tree).storage, "b", "p/", signal()));
    expect(await collect(listAll(memoryStore(tree, { pageSize: 3 }).storage, "b", "p/", signal()))).toEqual(flat);
    expect(await collect(listAll(memoryStore(tree, { ignoreDelimiter: true }).storage, "b", "p/", signal()))).toEqual(
      flat,
    );
  });

  test("once folders prove small, the rest is one flat listing instead of one listing per folder", async () => {
    const many = Array.from({ length: 400 }, (_, i) => `p/d${String(i).padStart(3, "0")}/${i % 2 ? "a" : "b"}`).concat(
      Array.from({ length: 400 }, (_, i) => `p/d${String(i).padStart(3, "0")}/c`),
    );
    const flat = await collect(listFlat(memoryStore(many).storage, "b", "p/", signal()));
    for (const after of [undefined, "p/d100/c", "p/d009/c"]) {
      const store = memoryStore(many);
      expect(await collect(listAll(store.storage, "b", "p/", signal(), after))).toEqual(
        flat.filter((k) => after === undefined || utf8(k, after) > 0),
      );
      expect(store.requests.length).toBeLessThan(30);
    }
  });

  test("a reader that stops early stops the folders listing ahead", async () => {
    const store = memoryStore(tree);
    expect(await collect(listAll(store.storage, "b", "p/", signal()), 5)).toHaveLength(5);
    const after = store.requests.length;
    await Bun.sleep(50);
    expect(store.requests.length).toBe(after);
  });

  test("a folder whose listing fails fails the scan when its turn comes, after the keys before it", async () => {
    const seen: string[] = [];
    const run = async () => {
      for await (const o of listAll(memoryStore(tree, { failUnder: "p/f1" }).storage, "b", "p/", signal()))
        seen.push(o.key);
    };
    await expect(run()).rejects.toThrow("boom");
    expect(seen).toContain("p/f0/k");
    expect(seen).not.toContain("p/f10/k");
  });
});
