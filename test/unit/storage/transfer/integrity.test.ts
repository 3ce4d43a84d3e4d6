/** Which ETags are MD5s of the object, and what a GET answer promises about its body. */
import { expect, test } from "bun:test";
import { etagMd5, promisesOf } from "../../../../src/storage/transfer/integrity.ts";

test("only single-part, unencrypted-by-KMS ETags are MD5s", () => {
  expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e"')).toBe("d41d8cd98f00b204e9800998ecf8427e");
  expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e-3"')).toBeUndefined();
  expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e"', { sse: "aws:kms" })).toBeUndefined();
  expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e"', { customerKey: "AES256" })).toBeUndefined();
});

test("a whole answer's checksum is checked instead of its ETag's MD5; without one, or in a range, the MD5 stands", () => {
  const etag = '"9e107d9d372bb6826bd81d3542a419d6"';
  const withCrc = promisesOf({ ETag: etag, ChecksumCRC32: "AAAAAA==", ContentLength: 3, $metadata: {} }, true);
  expect(withCrc.md5).toBeUndefined();
  expect(withCrc.checksums).toEqual([["crc32", "AAAAAA=="]]);
  expect(promisesOf({ ETag: etag, ContentLength: 3, $metadata: {} }, true).md5).toBe(
    "9e107d9d372bb6826bd81d3542a419d6",
  );
  const range = promisesOf({ ETag: etag, ChecksumCRC32: "AAAAAA==", ContentLength: 3, $metadata: {} }, false);
  expect(range).toMatchObject({ md5: undefined, checksums: [] });
});
