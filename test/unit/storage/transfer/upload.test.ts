import { expect, test } from "bun:test";
import { fetchClientFor } from "../../../../src/storage/requests/client.ts";
import { MAX_PARTS, MIN_PART_SIZE, partSizeFor, queueSizeFor } from "../../../../src/storage/transfer/part-sizes.ts";

test("part size: 5 MiB floor (S3 minimum), grows so 5 TiB fits in 10,000 parts", () => {
  expect(partSizeFor(0)).toBe(MIN_PART_SIZE);
  expect(partSizeFor(1024 ** 3)).toBe(MIN_PART_SIZE);
  const fiveTiB = 5 * 1024 ** 4;
  const part = partSizeFor(fiveTiB);
  expect(Math.ceil(fiveTiB / part)).toBeLessThanOrEqual(MAX_PARTS);
  expect(part % (1024 * 1024)).toBe(0);
  expect(part).toBeLessThanOrEqual(5 * 1024 ** 3); // S3's largest part
});

test("queue size shrinks as parts grow, so buffered bytes stay bounded", () => {
  expect(queueSizeFor(8 * 1024 * 1024)).toBe(3);
  expect(queueSizeFor(600 * 1024 * 1024)).toBe(1);
});

test("keys with . or .. path segments are sent by the client whose URLs are not normalized", () => {
  const handle = { client: "node", fetchClient: "fetch", sdk: {} } as never;
  for (const key of ["../../a", "a/./b", "a/../b", "..", "a/..", "."])
    expect(fetchClientFor(handle, key) as unknown).toBe("node");
  for (const key of ["a.b", "..a", "a..", ".hidden/x", "a/...", "a/.b./c"])
    expect(fetchClientFor(handle, key) as unknown).toBe("fetch");
});

test("a far store gets more parts in flight, still within the buffer budget", () => {
  expect(queueSizeFor(5 * 1024 * 1024, true)).toBe(4);
  expect(queueSizeFor(16 * 1024 * 1024, true)).toBe(4);
  expect(queueSizeFor(600 * 1024 * 1024, true)).toBe(1);
  // Parts sent from the file hold only a 1 MiB hashing buffer each.
  expect(queueSizeFor(5 * 1024 * 1024, true, true)).toBe(12);
  expect(queueSizeFor(5 * 1024 * 1024, false, true)).toBe(3);
  // Streamed parts (a copy from another store) hold no buffer: huge parts go as many at once as small ones.
  expect(queueSizeFor(600 * 1024 * 1024, true, false, true)).toBe(4);
  expect(queueSizeFor(600 * 1024 * 1024, false, false, true)).toBe(3);
});
