/**
 * Resuming a multipart upload of a local file that was cut (upload.ts,
 * docs/reliability.md). The upload is recorded when it starts
 * (runtime/kept-transfers.ts); a cut call keeps it. The next call for the
 * same destination continues it only if it reads the same file (real path,
 * size, modification time) with the same part size and object settings, and
 * the store still has the upload: its parts are listed (ListParts) and each
 * counts only once the MD5 of the local bytes of that part matches its ETag
 * (upload.ts checks that as it reaches each part). Anything else aborts the
 * old upload and starts a new one. Uploads kept past 24 h are aborted by the
 * next upload to their store. A copy from another store's object pinned by
 * its ETag (`trusted`) counts the listed parts as they are: each was sent with
 * Content-MD5 of bytes read under that ETag, so the store holds exactly them.
 */

import { s3Uri } from "../../runtime/errors.ts";
import { KEEP_MS, type KeptTransfers, type KeptUpload } from "../../runtime/kept-transfers.ts";
import { stalledListing } from "../errors.ts";
import type { S3Handle } from "../requests/client.ts";
import type { UploadRequest } from "../transfer-types.ts";
import { fitsOnePart } from "./part-sizes.ts";
import type { ResumedUpload, StoredPart, UploadKeeper } from "./upload-keeper.ts";

export interface UploadResume {
  kept: KeptTransfers;
  /** The store's identity in the records: its endpoint. */
  store: string;
}

/** What makes the object besides its bytes: a kept upload with other settings is not continued. */
export function objectSettings(req: UploadRequest): string {
  return JSON.stringify([
    req.contentType,
    req.storageClass ?? null,
    req.cacheControl ?? null,
    req.metadata ?? null,
    ...(req.encryption ? [req.encryption] : []),
  ]);
}

/**
 * Whether this upload can be kept and resumed: a known source, in parts, on a store with a state directory. One that
 * fits one part is a single PUT (upload.ts), never kept: a copy of thousands of small objects asks the state
 * directory nothing.
 */
export function resumable(req: UploadRequest, resume: UploadResume | undefined): resume is UploadResume {
  return (
    resume?.kept.enabled === true && req.source !== undefined && req.streamed !== "whole" && !fitsOnePart(req.size)
  );
}

/** Whether the kept upload for this destination is one of these bytes, in these parts, with these settings. */
function continues(record: KeptUpload, made: KeptUpload): boolean {
  return (
    record.source.id === made.source.id &&
    record.source.size === made.source.size &&
    record.source.version === made.source.version &&
    record.part_size === made.part_size &&
    record.params === made.params
  );
}

/** The record this upload would keep (its upload id still to come): what a kept one must match to be continued. */
function recordOf(req: UploadRequest, resume: UploadResume, partSize: number): KeptUpload {
  return {
    store: resume.store,
    bucket: req.bucket,
    key: req.key,
    upload_id: "",
    source: { id: req.source!.id, size: req.size, version: req.source!.version },
    part_size: partSize,
    params: objectSettings(req),
    created_at: 0,
  };
}

/** Whether the next upload of `req` would continue a kept one (a copy between stores then reads only the parts the store lacks). */
export function hasKeptUpload(req: UploadRequest, resume: UploadResume | undefined, partSize: number): boolean {
  if (!resumable(req, resume)) return false;
  const record = resume.kept.upload({ store: resume.store, bucket: req.bucket, key: req.key });
  return (
    record !== undefined &&
    continues(record, recordOf(req, resume, partSize)) &&
    Date.now() - record.created_at <= KEEP_MS
  );
}

/** The keeper of an upload that can be resumed (a known source, a state directory), or undefined. */
export function keeperFor(
  s3: S3Handle,
  req: UploadRequest,
  resume: UploadResume | undefined,
  partSize: number,
): UploadKeeper | undefined {
  return resumable(req, resume)
    ? new KeptUploadRecord(s3, resume.kept, recordOf(req, resume, partSize), req.mayAbort)
    : undefined;
}

/** An upload's record in the state directory (runtime/kept-transfers.ts), made once from the request and kept by this. */
class KeptUploadRecord implements UploadKeeper {
  constructor(
    readonly s3: S3Handle,
    readonly kept: KeptTransfers,
    /** This upload's record, but for its upload id and time (given when one is recorded). */
    readonly made: KeptUpload,
    readonly mayAbort: UploadRequest["mayAbort"],
  ) {}

  /**
   * The kept upload this call continues, with the parts the store lists for
   * it; undefined when there is none to continue (a kept one for another file
   * or other settings is aborted first). Expired uploads of this store are
   * aborted on the way.
   */
  async find(signal: AbortSignal): Promise<ResumedUpload | undefined> {
    await this.#abortExpired();
    const record = this.kept.upload(this.made);
    if (!record) return undefined;
    if (continues(record, this.made)) {
      try {
        return { uploadId: record.upload_id, parts: await listStoredParts(this.s3, record, signal) };
      } catch (err) {
        // Aborted or expired at the store (NoSuchUpload), or not listable: start over.
        if (signal.aborted) throw err;
      }
    }
    await abortQuietly(this.s3, record);
    this.kept.dropUpload(record, record.upload_id);
    return undefined;
  }

  record(uploadId: string): boolean {
    return this.kept.keepUpload({ ...this.made, upload_id: uploadId, created_at: Date.now() });
  }

  drop(uploadId: string): void {
    this.kept.dropUpload(this.made, uploadId);
  }

  /**
   * Aborts the uploads kept longer than 24 h that this call may itself write to (the same store and bucket, and a key
   * its caller's guard allows: req.mayAbort) and forgets them; others wait for a call that may.
   */
  async #abortExpired(): Promise<void> {
    for (const record of this.kept.expired().uploads) {
      if (record.store !== this.made.store || record.bucket !== this.made.bucket) continue;
      if (this.mayAbort && !this.mayAbort(record.bucket, record.key)) continue;
      await abortQuietly(this.s3, record);
      this.kept.dropUpload(record, record.upload_id);
    }
  }
}

async function listStoredParts(
  s3: S3Handle,
  { bucket, key, upload_id: uploadId }: KeptUpload,
  signal: AbortSignal,
): Promise<Map<number, StoredPart>> {
  const { client, sdk } = s3;
  const parts = new Map<number, StoredPart>();
  let marker: string | undefined;
  do {
    const page = await client.send(
      new sdk.ListPartsCommand({
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
        ...(marker ? { PartNumberMarker: marker } : {}),
      }),
      { abortSignal: signal },
    );
    for (const p of page.Parts ?? []) {
      if (p.PartNumber !== undefined && p.ETag && p.Size !== undefined)
        parts.set(p.PartNumber, { etag: p.ETag, size: p.Size, ...(p.ChecksumCRC32 ? { crc32: p.ChecksumCRC32 } : {}) });
    }
    const next = page.IsTruncated ? page.NextPartNumberMarker : undefined;
    // The caller (find) starts over on any error here, this one included.
    if (next !== undefined && next === marker) throw stalledListing(s3Uri(bucket, key));
    marker = next;
  } while (marker);
  return parts;
}

/** Best effort, without the call's signal: the clean-up must go out even when the call was cancelled. */
export async function abortQuietly(
  { client, sdk }: S3Handle,
  record: { bucket: string; key: string; upload_id: string },
): Promise<void> {
  await client
    .send(new sdk.AbortMultipartUploadCommand({ Bucket: record.bucket, Key: record.key, UploadId: record.upload_id }))
    .catch(() => {});
}
