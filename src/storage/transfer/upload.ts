import type { S3Handle } from "../requests/client.ts";
import type { UploadRequest, UploadResult } from "../types.ts";
import { MultipartUpload } from "./multipart-upload.ts";
import { fitsOnePart } from "./part-sizes.ts";
import { keepsSourceParts, uploadPartSize } from "./same-parts.ts";
import { putSingle } from "./single-put.ts";
import { keeperFor, type UploadResume } from "./upload-resume.ts";

/**
 * Uploads a local file (or another store's object): one PutObject when it
 * fits in one part, else a multipart upload in phases (multipart-upload.ts),
 * its resume record kept by a keeper when the upload can be resumed
 * (upload-resume.ts).
 */
export async function uploadObject(
  s3: S3Handle,
  req: UploadRequest,
  signal: AbortSignal | undefined,
  requestTimeoutMs: number,
  resume?: UploadResume,
): Promise<UploadResult> {
  if (fitsOnePart(req.size)) return putSingle(s3, req, signal, requestTimeoutMs);
  const partSize = uploadPartSize(req, s3.quirks);
  // The source's parts are kept only where their ETags compose (same-parts.ts); anywhere else they are not asked for.
  const { sameParts, ...rest } = req;
  const request = keepsSourceParts(req, s3.quirks) ? req : rest;
  return new MultipartUpload(
    s3,
    request,
    partSize,
    signal,
    requestTimeoutMs,
    keeperFor(s3, request, resume, partSize),
  ).run();
}
