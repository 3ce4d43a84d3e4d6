/** Which ETags are MD5s of the object. */
import { expect, test } from "bun:test";
import { etagMd5 } from "../../../../src/storage/transfer/integrity.ts";

test("only single-part, unencrypted-by-KMS ETags are MD5s", () => {
  expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e"')).toBe("d41d8cd98f00b204e9800998ecf8427e");
  expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e-3"')).toBeUndefined();
  expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e"', { sse: "aws:kms" })).toBeUndefined();
  expect(etagMd5('"d41d8cd98f00b204e9800998ecf8427e"', { customerKey: "AES256" })).toBeUndefined();
});
