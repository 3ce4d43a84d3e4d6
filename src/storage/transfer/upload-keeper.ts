/**
 * The record a multipart upload keeps so that a cut call can be resumed
 * (upload-resume.ts), as the upload sees it: find a kept upload to continue,
 * record a new one before any part goes, forget one that completed, was
 * aborted or is started over. Injected into the upload (multipart-upload.ts),
 * which never reaches the state directory itself; upload-resume.ts keeps
 * the record.
 */

/** A part the store already holds: checked against the local bytes before it counts. */
export interface StoredPart {
  etag: string;
  size: number;
  crc32?: string;
}

export interface ResumedUpload {
  uploadId: string;
  parts: Map<number, StoredPart>;
}

export interface UploadKeeper {
  /** A kept upload of this source to this destination, its stored parts listed; undefined: start a new one. */
  find(signal: AbortSignal): Promise<ResumedUpload | undefined>;
  /** Records a new upload; false when it cannot be (then it is not kept: a cut aborts it). */
  record(uploadId: string): boolean;
  /** Forgets an upload's record. */
  drop(uploadId: string): void;
}
