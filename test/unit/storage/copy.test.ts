/** Copy sources and copy part sizes by S3's rules. */
import { expect, test } from "bun:test";
import { copyPartSize, copySource } from "../../../src/storage/copy.ts";

const MiB = 1024 * 1024;

test("copy sources are URL-encoded per segment; copy parts follow S3's rules", () => {
  expect(copySource({ bucket: "b", key: "a b/c+d?.txt", versionId: "v/1" })).toBe(
    "b/a%20b/c%2Bd%3F.txt?versionId=v%2F1",
  );
  expect(copyPartSize(13 * MiB, 12 * MiB)).toBe(6 * MiB);
  expect(copyPartSize(6 * 1024 ** 3, 5 * 1024 ** 3)).toBe(512 * MiB);
  const huge = 5 * 1024 ** 4; // 5 TiB must fit 10,000 parts
  expect(Math.ceil(huge / copyPartSize(huge, 5 * 1024 ** 3))).toBeLessThanOrEqual(10_000);
});
