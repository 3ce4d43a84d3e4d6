/**
 * copyAcrossStores (storage/cross-copy.ts) for a listed object: no HEAD, the
 * download's first answer must match the listing. A source replaced between
 * the listing and the GET is ObjectChanged before any byte is uploaded (no
 * real store can be made to replace an object in that window on demand).
 */
import { expect, test } from "bun:test";
import type { Storage } from "../../../../src/storage/index.ts";
import { copyAcrossStores } from "../../../../src/storage/transfer/cross-copy.ts";

function source(etag: string, size: number, calls: string[]): Storage {
  return {
    headObject: async () => {
      calls.push("head");
      throw new Error("a listed object needs no HEAD");
    },
    openObjectDownload: async () => {
      calls.push("get");
      return {
        meta: { content_type: "text/plain", size, etag, last_modified: null, version_id: null },
        carried: { cache_control: null, metadata: {} },
        size,
        deliver: async () => {},
        discard: () => calls.push("discard"),
      };
    },
  } as unknown as Storage;
}

const target = (calls: string[]) => ({ uploadObject: async () => void calls.push("upload") }) as unknown as Storage;
const req = (etag: string) => ({
  source: { bucket: "b", key: "k" },
  bucket: "d",
  key: "k",
  metadataDirective: "COPY" as const,
  listed: { size: 5, etag },
});

test("a listed object replaced before its GET: ObjectChanged, no HEAD, nothing uploaded, the download dropped", async () => {
  const calls: string[] = [];
  await expect(copyAcrossStores(source('"new"', 5, calls), target(calls), req('"old"'))).rejects.toMatchObject({
    code: "ObjectChanged",
  });
  expect(calls).toEqual(["get", "discard"]);
});

test("a listed object of another size: ObjectChanged as well", async () => {
  const calls: string[] = [];
  await expect(copyAcrossStores(source('"same"', 6, calls), target(calls), req('"same"'))).rejects.toMatchObject({
    code: "ObjectChanged",
  });
  expect(calls).not.toContain("upload");
});
