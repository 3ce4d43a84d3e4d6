/**
 * Narrowed listings (a caller whose grants are below the requested prefix):
 * paged through to the end at every page size, with and without a delimiter,
 * they give exactly what a whole listing filtered to the view gives, in key
 * order, with markers that name no hidden key; many empty grants cost a
 * bounded number of store requests per page.
 */
import { describe, expect, test } from "bun:test";
import { narrowedObjects, unitsUnder } from "../../../src/access/narrowed-listing.ts";
import { byteOrder } from "../../../src/bulk/listing.ts";
import type { ListObjectsRequest, ObjectPage, Storage } from "../../../src/storage/index.ts";

/** A store over a sorted key list whose continuation token is the plain last key (as Ceph RGW's). */
function memoryStore(keys: string[]): Storage & { requests: number } {
  const sorted = [...keys].sort(byteOrder);
  const store = {
    requests: 0,
    async listObjects(req: ListObjectsRequest): Promise<ObjectPage> {
      store.requests++;
      const prefix = req.prefix ?? "";
      const after = req.continuationToken ?? req.startAfter;
      const objects: ObjectPage["objects"] = [];
      const folders: string[] = [];
      let last: string | undefined;
      for (const key of sorted) {
        if (!key.startsWith(prefix) || (after !== undefined && byteOrder(key, after) <= 0)) continue;
        const at = req.delimiter ? key.indexOf(req.delimiter, prefix.length) : -1;
        const entry = at >= 0 ? key.slice(0, at + req.delimiter!.length) : key;
        if (at >= 0 && folders.at(-1) === entry) continue;
        if (objects.length + folders.length >= req.maxKeys)
          return { objects, common_prefixes: folders, is_truncated: true, next_continuation_token: last! };
        if (at >= 0) folders.push(entry);
        else objects.push({ key, size: 1, last_modified: null, etag: null, storage_class: null });
        // The token after a folder is past everything in it.
        last = at >= 0 ? `${entry}\u{10FFFF}` : key;
      }
      return { objects, common_prefixes: folders, is_truncated: false, next_continuation_token: null };
    },
  };
  return store as unknown as Storage & { requests: number };
}

const KEYS = [
  "a.txt",
  "shared/x/1",
  "shared/x/2",
  "shared/y/hidden",
  "shared/z",
  "team-a/1",
  "team-a/sub/2",
  "team-a/sub/3",
  "team-b/secret",
  "zz-hidden",
];
const GRANTED = ["team-a/", "shared/x/"];
const visible = (k: string) => GRANTED.some((g) => k.startsWith(g));

async function pageThrough(store: Storage, prefix: string, delimiter: string | undefined, maxKeys: number) {
  const units = unitsUnder(prefix, delimiter, GRANTED);
  const seen: string[] = [];
  const markers: string[] = [];
  let token: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = await narrowedObjects(
      store,
      {
        bucket: "b",
        prefix,
        maxKeys,
        ...(delimiter ? { delimiter } : {}),
        ...(token ? { continuationToken: token } : {}),
      },
      units,
    );
    seen.push(...page.common_prefixes, ...page.objects.map((o) => o.key));
    if (!page.is_truncated) return { seen, markers };
    token = page.next_continuation_token!;
    markers.push(token);
  }
  throw new Error("did not end");
}

describe("paged to the end, exactly the view", () => {
  for (const maxKeys of [1, 2, 3, 1000]) {
    test(`flat, max_keys ${maxKeys}`, async () => {
      const { seen, markers } = await pageThrough(memoryStore(KEYS), "", undefined, maxKeys);
      expect(seen).toEqual(KEYS.filter(visible));
      for (const m of markers)
        expect(Buffer.from(m.slice(4), "base64url").toString()).not.toMatch(/hidden|secret|shared\/z|shared\/y/);
    });
    test(`one level, max_keys ${maxKeys}`, async () => {
      expect((await pageThrough(memoryStore(KEYS), "", "/", maxKeys)).seen.sort(byteOrder)).toEqual([
        "shared/",
        "team-a/",
      ]);
      expect((await pageThrough(memoryStore(KEYS), "team-a/", "/", maxKeys)).seen.sort(byteOrder)).toEqual([
        "team-a/1",
        "team-a/sub/",
      ]);
      expect((await pageThrough(memoryStore(KEYS), "shared/", "/", maxKeys)).seen.sort(byteOrder)).toEqual([
        "shared/x/",
      ]);
    });
  }
});

test("many empty grants: a page makes a bounded number of store requests and still gets to the end", async () => {
  const granted = Array.from({ length: 120 }, (_, i) => `p${String(i).padStart(3, "0")}/`);
  const store = memoryStore(["p119/last"]);
  const units = unitsUnder("", undefined, granted);
  let token: string | undefined;
  const seen: string[] = [];
  for (let i = 0; i < 10; i++) {
    const before = store.requests;
    const page = await narrowedObjects(
      store,
      { bucket: "b", maxKeys: 10, ...(token ? { continuationToken: token } : {}) },
      units,
    );
    expect(store.requests - before).toBeLessThanOrEqual(50);
    seen.push(...page.objects.map((o) => o.key));
    if (!page.is_truncated) break;
    token = page.next_continuation_token!;
  }
  expect(seen).toEqual(["p119/last"]);
});

test("a grant inside another is listed once; a deeper grant shows as its folder", () => {
  expect(unitsUnder("", undefined, ["a/", "a/b/", "c"])).toEqual([{ prefix: "a/" }, { prefix: "c" }]);
  expect(unitsUnder("", "/", ["a/b/", "a/c/", "d"])).toEqual([{ folder: "a/" }, { prefix: "d" }]);
});
