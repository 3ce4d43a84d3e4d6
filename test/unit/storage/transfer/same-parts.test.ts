/** same-parts.ts: the source's part size inferred from its ETag's count and its size, and the parts' ETags composed before Complete. */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { QUIRKS } from "../../../../src/storage/quirks.ts";
import {
  checkComposed,
  checkPartAnswer,
  composedEtagOf,
  keepsSourceParts,
  PartsUnlikeSource,
  sourceParts,
  uploadPartSize,
} from "../../../../src/storage/transfer/same-parts.ts";

const MiB = 1024 * 1024;
const ETAG = "0123456789abcdef0123456789abcdef";

test("the part size is inferred as clients pick it: ours, a power of two MiB, a multiple of 5 MiB", () => {
  // The AWS CLI's 8 MiB: 1 GiB in 128.
  expect(sourceParts(`${ETAG}-128`, 1024 * MiB)).toEqual({ etag: `${ETAG}-128`, partSize: 8 * MiB, count: 128 });
  // Ours and rclone's 5 MiB, the last part short.
  expect(sourceParts(`${ETAG}-3`, 15 * MiB - 7)?.partSize).toBe(5 * MiB);
  // 64 MiB parts, 10 of them: any whole MiB from 58 to 64 gives the count; the power of two is taken.
  expect(sourceParts(`${ETAG}-10`, 9 * 64 * MiB + 1)?.partSize).toBe(64 * MiB);
  // 25 MiB parts, 20 of them: no power of two gives 20, a multiple of 5 MiB does.
  expect(sourceParts(`${ETAG}-20`, 20 * 25 * MiB)?.partSize).toBe(25 * MiB);
  // Quoted, upper case: read the same.
  expect(sourceParts(`"${ETAG.toUpperCase()}-2"`, 10 * MiB)?.etag).toBe(`${ETAG}-2`);
});

test("no layout when S3's rules cannot give the count: parts under 5 MiB, one part, more than 10,000", () => {
  expect(sourceParts(`${ETAG}-4`, 4 * MiB)).toBeUndefined();
  expect(sourceParts(`${ETAG}-1`, 20 * MiB)).toBeUndefined();
  expect(sourceParts(`${ETAG}-10001`, 10001 * 5 * MiB)).toBeUndefined();
  expect(sourceParts(ETAG, 20 * MiB)).toBeUndefined();
});

test("a composed ETag only from a store known to compose it, and not under KMS or a customer key", () => {
  expect(composedEtagOf(`"${ETAG}-3"`, QUIRKS.ceph, {})).toBe(`${ETAG}-3`);
  expect(composedEtagOf(`"${ETAG}-3"`, QUIRKS.other, {})).toBeUndefined();
  expect(composedEtagOf(`"${ETAG}-3"`, QUIRKS.aws, { sse: "aws:kms" })).toBeUndefined();
  expect(composedEtagOf(`"${ETAG}-3"`, QUIRKS.aws, { customerKey: "AES256" })).toBeUndefined();
  expect(composedEtagOf(`"${ETAG}-3"`, QUIRKS.aws, { sse: "AES256" })).toBe(`${ETAG}-3`);
  expect(composedEtagOf(`"${ETAG}"`, QUIRKS.aws, {})).toBeUndefined();
});

test("a destination keeps the parts only where its part ETags are MD5s: its quirks, no KMS", () => {
  const req = { bucket: "b", key: "k", size: 15 * MiB, contentType: "x/y", readAt: async () => 0 };
  const sameParts = { etag: `${ETAG}-2`, partSize: 8 * MiB, count: 2 };
  expect(uploadPartSize({ ...req, sameParts }, QUIRKS.ceph)).toBe(8 * MiB);
  expect(uploadPartSize({ ...req, sameParts }, QUIRKS.b2)).toBe(5 * MiB);
  expect(keepsSourceParts({ ...req, sameParts, encryption: { sse: "aws:kms" } }, QUIRKS.aws)).toBe(false);
  expect(keepsSourceParts({ ...req, sameParts, encryption: { sse: "AES256" } }, QUIRKS.aws)).toBe(true);
  expect(uploadPartSize(req, QUIRKS.ceph)).toBe(5 * MiB);
});

test("the parts' ETags must compose the source's: one changed, one missing or one not an MD5 refuses", () => {
  const md5s = ["a", "b", "c"].map((s) => createHash("md5").update(s).digest("hex"));
  const composed = `${createHash("md5")
    .update(Buffer.from(md5s.join(""), "hex"))
    .digest("hex")}-3`;
  const req = {
    bucket: "b",
    key: "k",
    size: 1,
    contentType: "x/y",
    readAt: async () => 0,
    sameParts: { etag: composed, partSize: 1, count: 3 },
  };
  const parts = md5s.map((m, i) => ({ PartNumber: i + 1, ETag: `"${m}"` }));
  expect(() => checkComposed(req, parts)).not.toThrow();
  expect(() => checkComposed(req, [parts[0]!, parts[2]!, parts[1]!])).toThrow(PartsUnlikeSource);
  expect(() => checkComposed(req, parts.slice(0, 2))).toThrow(PartsUnlikeSource);
  expect(() => checkComposed(req, [parts[0]!, parts[1]!, { PartNumber: 3, ETag: '"kms-etag"' }])).toThrow(
    "a part's ETag is no MD5 of its bytes",
  );
});

test("a part's answer that cannot compose (KMS, a customer key, an ETag no MD5) sends the copy the checked way at once", () => {
  const req = { bucket: "b", key: "k", size: 1, contentType: "x/y", readAt: async () => 0 };
  expect(() => checkPartAnswer(req, { ETag: `"${ETAG}"` })).not.toThrow();
  expect(() => checkPartAnswer(req, { ETag: `"${ETAG}"`, ServerSideEncryption: "AES256" })).not.toThrow();
  expect(() => checkPartAnswer(req, { ETag: `"${ETAG}"`, ServerSideEncryption: "aws:kms" })).toThrow(PartsUnlikeSource);
  expect(() => checkPartAnswer(req, { ETag: `"${ETAG}"`, SSECustomerAlgorithm: "AES256" })).toThrow(PartsUnlikeSource);
  expect(() => checkPartAnswer(req, { ETag: '"not-an-md5"' })).toThrow(PartsUnlikeSource);
  expect(() => checkPartAnswer(req, {})).toThrow(PartsUnlikeSource);
});
