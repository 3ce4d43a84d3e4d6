/**
 * One multipart upload, in phases: start (continue a kept upload, or create
 * one and record it), send the parts (part-sender.ts), complete, and, when
 * anything fails, settle: every part in flight is stopped and the upload
 * aborted, so nothing is left for the store to keep and bill. The one
 * exception is a cut (the call cancelled, the server stopping, but not
 * cancel_job) of an upload its keeper records (upload-keeper.ts: a known
 * source, a state directory): that upload is kept, and the next call for the
 * same source and destination continues it.
 */
import type { CompletedPart } from "@aws-sdk/client-s3";
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import { keepsOnStop } from "../../runtime/stop-reason.ts";
import { CreateAttempts } from "../orphaned-uploads.ts";
import type { S3Handle } from "../requests/client.ts";
import type { UploadRequest, UploadResult } from "../transfer-types.ts";
import { PartSender } from "./part-sender.ts";
import { checkComposed } from "./same-parts.ts";
import { objectParams } from "./single-put.ts";
import type { ResumedUpload, UploadKeeper } from "./upload-keeper.ts";
import { abortQuietly } from "./upload-resume.ts";

export class MultipartUpload {
  /** Stops every part at the first failure or the caller's cancel. */
  readonly #stop = new AbortController();
  readonly #creation = new CreateAttempts();
  /** The upload to abort if this one fails (undefined once completed, or before it exists). */
  #uploadId: string | undefined;
  #resumed: ResumedUpload | undefined;
  #keeper: UploadKeeper | undefined;
  #checksummed = false;

  constructor(
    readonly s3: S3Handle,
    readonly req: UploadRequest,
    readonly partSize: number,
    readonly signal: AbortSignal | undefined,
    readonly requestTimeoutMs: number,
    keeper: UploadKeeper | undefined,
  ) {
    this.#keeper = keeper;
  }

  async run(): Promise<UploadResult> {
    const onCallerAbort = () => this.#stop.abort(this.signal?.reason);
    if (this.signal?.aborted) onCallerAbort();
    this.signal?.addEventListener("abort", onCallerAbort, { once: true });
    try {
      this.#checksummed = (await this.s3.client.config.requestChecksumCalculation()) === "WHEN_SUPPORTED";
      const uploadId = await this.#start();
      const parts = await new PartSender({
        s3: this.s3,
        req: this.req,
        partSize: this.partSize,
        uploadId,
        stop: this.#stop,
        checksummed: this.#checksummed,
        ...(this.#resumed ? { resumed: this.#resumed } : {}),
        requestTimeoutMs: this.requestTimeoutMs,
      }).sendAll();
      return await this.#complete(uploadId, parts);
    } catch (err) {
      await this.#settle(err);
      throw err;
    } finally {
      this.signal?.removeEventListener("abort", onCallerAbort);
      await this.#creation.abortOrphans(this.s3, this.req.bucket, this.req.key, this.#uploadId);
    }
  }

  /** A kept upload to continue, or a new one, recorded before any part goes. */
  async #start(): Promise<string> {
    const { s3, req } = this;
    this.#resumed = this.#keeper ? await this.#keeper.find(this.#stop.signal) : undefined;
    if (this.#resumed && req.streamed) {
      // Streamed parts come from a pipe in order and cannot skip: a kept upload is continued by a copy that reads the
      // parts it lacks (cross-copy.ts); met here (another process kept it meanwhile), it is started over.
      await abortQuietly(s3, { bucket: req.bucket, key: req.key, upload_id: this.#resumed.uploadId });
      this.#keeper!.drop(this.#resumed.uploadId);
      this.#resumed = undefined;
    }
    this.#uploadId = this.#resumed?.uploadId;
    if (!this.#resumed) await this.#create();
    if (!this.#uploadId)
      throw new ActionableError({
        resource: s3Uri(req.bucket, req.key),
        code: "NoUploadId",
        message: "The store started a multipart upload without an upload id.",
        hint: "retry; if it keeps happening the store is not S3-compatible enough for large uploads.",
      });
    return this.#uploadId;
  }

  async #create(): Promise<void> {
    const { s3, req } = this;
    this.#stop.signal.throwIfAborted();
    this.#creation.started();
    try {
      // Not cut by a cancel: a create the store has already received may still start an upload after the client
      // hangs up (a busy store does, seconds later), which nobody would know of. It is waited for (it is small; the
      // request timeout bounds it), so its upload is kept or aborted like any other.
      const created = await s3.client.send(
        new s3.sdk.CreateMultipartUploadCommand({
          ...objectParams(req),
          ...(this.#checksummed ? { ChecksumAlgorithm: "CRC32" } : {}),
        }),
      );
      this.#creation.ended(created);
      this.#uploadId = created.UploadId;
    } catch (err) {
      this.#creation.ended(err, true);
      throw err;
    }
    if (this.#stop.signal.aborted) {
      // Cut while the store started it: no part sent, nothing worth keeping.
      if (this.#uploadId) await abortQuietly(s3, { bucket: req.bucket, key: req.key, upload_id: this.#uploadId });
      this.#uploadId = undefined;
      this.#stop.signal.throwIfAborted();
    }
    // Recorded before any part goes: a process killed from here on leaves an upload the next call finds.
    // Not recorded (a state directory that cannot be written): not kept either, a cut aborts it as before.
    if (this.#keeper && this.#uploadId && !this.#keeper.record(this.#uploadId)) this.#keeper = undefined;
  }

  /**
   * Not cut by a cancel either: a Complete the store has received may finish after the client hangs up, and a kept
   * record would then name an upload that is gone (a cut during it left one in CI). It is one small request, bounded
   * by the request timeout; once it is sent, the object is whole.
   */
  async #complete(uploadId: string, parts: CompletedPart[]): Promise<UploadResult> {
    const { s3, req } = this;
    // The source's parts kept: unhashed on their way, they are held to the source's ETag here, before anything is stored.
    if (req.sameParts) checkComposed(req, parts);
    const done = await s3.client.send(
      new s3.sdk.CompleteMultipartUploadCommand({
        Bucket: req.bucket,
        Key: req.key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
    this.#uploadId = undefined; // completed: nothing to abort
    this.#keeper?.drop(uploadId);
    if (done.ETag || !s3.quirks.completeMayOmitEtag)
      return { etag: done.ETag ?? null, version_id: done.VersionId ?? null };
    // Ceph RGW 16 answers CompleteMultipartUpload with an empty ETag (quirks.completeMayOmitEtag): ask for it.
    const head = await s3.client.send(
      new s3.sdk.HeadObjectCommand({
        Bucket: req.bucket,
        Key: req.key,
        ...(done.VersionId ? { VersionId: done.VersionId } : {}),
      }),
      { abortSignal: this.signal },
    );
    return { etag: head.ETag ?? null, version_id: done.VersionId ?? head.VersionId ?? null };
  }

  /** Every part stopped; the upload aborted and forgotten, unless a cut keeps it for the next call. */
  async #settle(err: unknown): Promise<void> {
    this.#stop.abort(err);
    const kept = this.#keeper && this.#uploadId && this.signal?.aborted && keepsOnStop(this.signal.reason);
    if (this.#uploadId && !kept) {
      await abortQuietly(this.s3, { bucket: this.req.bucket, key: this.req.key, upload_id: this.#uploadId });
      this.#keeper?.drop(this.#uploadId);
    }
  }
}
