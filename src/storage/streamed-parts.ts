/**
 * The parts of a multipart upload sent as streamed bodies, for a copy from
 * another store whose object has no MD5 to promise (it was stored in parts:
 * its ETag is no MD5 of its bytes, so streamed-put.ts cannot be used). Each
 * part's bytes go out as the source's own chunks, hashed as they pass and
 * freed once sent: no part is held in a buffer here. Its MD5 cannot go out
 * before its bytes, so the store does not check them as they come; the
 * part's ETag (the MD5 of the bytes the store took) is compared with ours
 * once it answers, and a mismatch aborts the whole upload — the same check
 * every part of ours gets (upload.ts, checkEtag), and nothing is stored
 * unless every part passed it. CompleteMultipartUpload names each part by
 * that ETag: a part replaced after it answered (its request replayed with
 * other bytes: the body is not signed) makes the store refuse to complete.
 *
 * Taken where the single PUT is (`streamFits`: a near store, custom
 * endpoints). A part's bytes are freed once sent, so a failed part is not
 * sent again: the upload is aborted and the copy fails, retryable, nothing
 * stored (the SDK's buffered parts would retry it).
 */
import { createHash } from "node:crypto";
import type { S3Handle } from "./client.ts";
import { sendStreamed } from "./streamed-body.ts";
import type { UploadRequest } from "./types.ts";

export interface StreamedPart {
  ETag?: string;
  ServerSideEncryption?: string;
  SSECustomerAlgorithm?: string;
  /** The MD5 of the bytes sent. */
  md5: Buffer;
}

/** Sends bytes `start` to `start + length` of the source as part `partNumber` of the upload `uploadId`. */
export async function putPartStreamed(s3: S3Handle, req: UploadRequest, uploadId: string, partNumber: number, start: number, length: number, signal: AbortSignal, idleMs: number): Promise<StreamedPart> {
  const hash = createHash("md5");
  const answer = await sendStreamed(
    s3,
    { method: "PUT", bucket: req.bucket, key: req.key, query: { partNumber: String(partNumber), uploadId }, headers: { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" } },
    req.takeAt!,
    start,
    length,
    signal,
    idleMs,
    (chunk) => hash.update(chunk),
  );
  const header = (name: string) => answer.headers.get(name) ?? undefined;
  return { ETag: header("etag"), ServerSideEncryption: header("x-amz-server-side-encryption"), SSECustomerAlgorithm: header("x-amz-server-side-encryption-customer-algorithm"), md5: hash.digest() };
}
