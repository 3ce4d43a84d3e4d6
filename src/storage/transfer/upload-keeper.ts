/**
 * The record a multipart upload keeps so that a cut call can be resumed
 * (upload-resume.ts), as the upload sees it: find a kept upload to continue,
 * record a new one before any part goes, forget one that completed, was
 * aborted or is started over. Injected into the upload (multipart-upload.ts),
 * which never reaches the state directory itself.
 */
import type { S3Handle } from "../requests/client.ts";
import type { UploadRequest } from "../transfer-types.ts";
import { findKeptUpload, keptRecord, type ResumedUpload, resumable, type UploadResume } from "./upload-resume.ts";

export interface UploadKeeper {
  /** A kept upload of this source to this destination, its stored parts listed; undefined: start a new one. */
  find(signal: AbortSignal): Promise<ResumedUpload | undefined>;
  /** Records a new upload; false when it cannot be (then it is not kept: a cut aborts it). */
  record(uploadId: string): boolean;
  /** Forgets an upload's record. */
  drop(uploadId: string): void;
}

/** The keeper of an upload that can be resumed (a known source, a state directory), or undefined. */
export function keeperFor(
  s3: S3Handle,
  req: UploadRequest,
  resume: UploadResume | undefined,
  partSize: number,
): UploadKeeper | undefined {
  if (!resumable(req, resume)) return undefined;
  const where = { store: resume.store, bucket: req.bucket, key: req.key };
  return {
    find: (signal) => findKeptUpload(s3, req, resume, partSize, signal),
    record: (uploadId) => resume.kept.keepUpload(keptRecord(req, resume, uploadId, partSize)),
    drop: (uploadId) => resume.kept.dropUpload(where, uploadId),
  };
}
