/**
 * A copy between stores that keeps the source's parts. A multipart object's
 * ETag is, at S3, Ceph RGW and MinIO, the MD5 of its parts' MD5s followed by
 * their count (quirks.composesPartEtags), and each part's ETag the MD5 of
 * the bytes the store took. So a copy cut in the same parts as its source
 * can be held to the source's ETag as a whole: the destination's part ETags,
 * composed the same way, must give it before the upload is completed. That
 * one check covers every byte end to end, from the source's store to the
 * destination's, and nothing is hashed here: the parts go unsigned and
 * unhashed (a copy in parts spent a quarter of its CPU, and the store as
 * much again, on the chunk signatures it replaces: docs/performance.md).
 *
 * The source's part size is not in its ETag, only their count: it is
 * inferred (`sourceParts`), the usual clients' sizes first. A wrong guess,
 * like a corrupted byte, makes the composed ETag differ: the upload is then
 * aborted, nothing stored, and the copy made again the checked way
 * (`PartsUnlikeSource`, cross-copy.ts).
 */
import { createHash } from "node:crypto";
import type { CompletedPart } from "@aws-sdk/client-s3";
import type { WriteEncryption } from "../../config/encryption-config.ts";
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import type { StoreQuirks } from "../quirks.ts";
import type { SourceParts, UploadRequest } from "../transfer-types.ts";
import { MAX_PARTS, MIN_PART_SIZE, partSizeFor } from "./part-sizes.ts";

const MiB = 1024 * 1024;
/** S3's largest part. */
const MAX_PART_SIZE = 5 * 1024 * MiB;
const COMPOSED_ETAG = /^"?([0-9a-f]{32}-(\d+))"?$/i;
const MD5_ETAG = /^"?([0-9a-f]{32})"?$/i;

/**
 * A multipart object's ETag as its store composed it from its parts' MD5s
 * (lowercase, unquoted), or undefined: a single-part object, a store not known
 * to compose it so, an object encrypted with KMS or a customer key.
 */
export function composedEtagOf(
  etag: string | undefined,
  quirks: StoreQuirks,
  encryption: { sse?: string; customerKey?: string },
): string | undefined {
  if (!etag || !quirks.composesPartEtags || encryption.customerKey || encryption.sse?.startsWith("aws:kms"))
    return undefined;
  return COMPOSED_ETAG.exec(etag)?.[1]?.toLowerCase();
}

/**
 * The parts an object of `size` bytes with the composed `etag` was most
 * likely uploaded in, or undefined when no part size of S3's rules gives
 * that count. Sizes are tried as clients pick them: the size our own uploads
 * use, a power of two MiB (the AWS CLI's 8 MiB, MinIO's 16), a multiple of
 * 5 MiB (rclone's and the SDKs' 5), else the smallest whole MiB that fits.
 */
export function sourceParts(etag: string, size: number): SourceParts | undefined {
  const [, composed, parts] = COMPOSED_ETAG.exec(etag) ?? [];
  const count = Number(parts);
  if (!composed || !Number.isInteger(count) || count < 2 || count > MAX_PARTS) return undefined;
  const fits = (partSize: number) =>
    partSize >= MIN_PART_SIZE && partSize <= MAX_PART_SIZE && Math.ceil(size / partSize) === count;
  const least = Math.ceil(size / count / MiB) * MiB;
  const candidates = [partSizeFor(size)];
  for (let p = 8 * MiB; p <= MAX_PART_SIZE; p *= 2) candidates.push(p);
  candidates.push(Math.ceil(least / (5 * MiB)) * 5 * MiB, least);
  const partSize = candidates.find(fits);
  return partSize === undefined ? undefined : { etag: composed.toLowerCase(), partSize, count };
}

/** Whether an upload to a store of these quirks keeps `req.sameParts`: its part ETags are MD5s only unencrypted or SSE-S3. */
export function keepsSourceParts(req: UploadRequest, quirks: StoreQuirks): boolean {
  return req.sameParts !== undefined && quirks.composesPartEtags && !encryptsPartEtags(req.encryption);
}

const encryptsPartEtags = (encryption: WriteEncryption | undefined) =>
  encryption !== undefined && encryption.sse !== "AES256";

/** The upload's part size: the source's, when its parts are kept; else ours for its size. */
export function uploadPartSize(req: UploadRequest, quirks: StoreQuirks): number {
  return keepsSourceParts(req, quirks) ? req.sameParts!.partSize : partSizeFor(req.size);
}

/** A part's answer that cannot be composed (no plain MD5 ETag: an encrypted bucket): the copy is made the checked way at once. */
export function checkPartAnswer(
  req: UploadRequest,
  answer: { ETag?: string; ServerSideEncryption?: string; SSECustomerAlgorithm?: string },
): void {
  const plain =
    !answer.SSECustomerAlgorithm &&
    !answer.ServerSideEncryption?.startsWith("aws:kms") &&
    MD5_ETAG.test(answer.ETag ?? "");
  if (!plain) throw new PartsUnlikeSource(req, `a part's ETag (${answer.ETag ?? "none"}) is no MD5 of its bytes`);
}

/** Before Complete: the parts' ETags composed must be the source's ETag, or nothing is stored. */
export function checkComposed(req: UploadRequest, parts: readonly CompletedPart[]): void {
  const md5s = parts.map((part) => MD5_ETAG.exec(part.ETag ?? "")?.[1]);
  if (md5s.some((md5) => md5 === undefined)) throw new PartsUnlikeSource(req, "a part's ETag is no MD5 of its bytes");
  const composed = `${createHash("md5")
    .update(Buffer.from(md5s.join(""), "hex"))
    .digest("hex")}-${parts.length}`;
  if (composed !== req.sameParts!.etag)
    throw new PartsUnlikeSource(
      req,
      `the parts stored compose ETag ${composed}, the source's is ${req.sameParts!.etag}`,
    );
}

/**
 * The copy's parts do not compose the source's ETag: bytes changed on the way,
 * or the source was cut in other parts than inferred. The upload is aborted;
 * cross-copy.ts makes the copy again the checked way, so this reaches a caller
 * only if that fails too.
 */
export class PartsUnlikeSource extends ActionableError {
  constructor(req: UploadRequest, why: string) {
    super({
      resource: s3Uri(req.bucket, req.key),
      code: "IntegrityCheckFailed",
      message: `The copy was not stored: ${why}.`,
      hint: "copy it again; if it repeats, the store or a proxy in front of it is corrupting data.",
      retryable: true,
    });
  }
}
