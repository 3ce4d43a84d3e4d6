/**
 * An object as a source (src/content/source.ts): which reads are the reader's
 * own to free once used (a Parquet fill frees each fetched slice after writing
 * it) and which are views of the first bytes the source keeps for every later
 * read. Freeing one of those would empty the source's own copy.
 */
import { expect, test } from "bun:test";
import { objectSource } from "../../../src/content/source.ts";
import type { Storage } from "../../../src/storage/index.ts";
import { randomBytes } from "../../helpers/files.ts";

test("a read served from the kept first bytes is not the reader's to free; a fetched one is", async () => {
  const object = randomBytes(1000, 4);
  const meta = { content_type: null, size: object.length, etag: '"e"', last_modified: null, version_id: null };
  // The one Storage call a source makes: a ranged read of the object's bytes.
  const storage = {
    readObjectHead: async (_addr: unknown, max: number, _signal: unknown, offset = 0) => ({
      meta,
      bytes: object.slice(offset, offset + max),
    }),
  } as unknown as Storage;
  const source = await objectSource(storage, { bucket: "b", key: "k.parquet" }, new AbortController().signal, 100);
  const inHead = await source.read(10, 50);
  const wholeHead = await source.read(0, 100);
  const fetched = await source.read(200, 50);
  expect([source.owned(inHead), source.owned(wholeHead), source.owned(fetched)]).toEqual([false, false, true]);
  expect(Buffer.from(wholeHead).equals(Buffer.from(object.subarray(0, 100)))).toBe(true);
  expect(Buffer.from(fetched).equals(Buffer.from(object.subarray(200, 250)))).toBe(true);
});
