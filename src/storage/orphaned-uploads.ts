import type { S3Handle } from "./requests/client.ts";

/** How far the store's clock may be off ours when matching an upload's start time. */
const CLOCK_MARGIN_MS = 10_000;

/**
 * Watches CreateMultipartUpload. When the store received one but its answer
 * was lost (a reset or a timeout), the SDK retries and the store ends up with
 * an upload whose id no one knows: S3 keeps its parts, and bills for them,
 * until someone aborts it. The same when the creation failed or was cancelled
 * after the request went out. Only such a creation can leave one, and only
 * then is the store asked.
 */
export class CreateAttempts {
  private attempts = 0;
  private failed = false;
  private startedAt = 0;
  private endedAt = 0;

  /** Records one CreateMultipartUpload send: call before, then with its outcome (the output, or the error with failed). */
  started(): void {
    this.startedAt = Date.now();
  }
  ended(outcome: unknown, failed = false): void {
    this.endedAt = Date.now();
    this.failed ||= failed;
    this.attempts = Math.max(
      this.attempts,
      (outcome as { $metadata?: { attempts?: number } } | undefined)?.$metadata?.attempts ?? 1,
    );
  }

  /**
   * Aborts uploads of exactly this key that the store started while our
   * creation was being retried, except `keep` (ours, already completed or
   * aborted). Best effort: a failure here does not change the call's result.
   */
  async abortOrphans(
    { client, sdk }: S3Handle,
    bucket: string,
    key: string,
    keep: string | undefined,
  ): Promise<number> {
    if (this.attempts <= 1 && !this.failed) return 0;
    const from = this.startedAt - CLOCK_MARGIN_MS;
    const to = this.endedAt + CLOCK_MARGIN_MS;
    let aborted = 0;
    try {
      const listed = await client.send(new sdk.ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
      for (const upload of listed.Uploads ?? []) {
        const started = upload.Initiated?.getTime();
        if (
          upload.Key !== key ||
          !upload.UploadId ||
          upload.UploadId === keep ||
          started === undefined ||
          started < from ||
          started > to
        )
          continue;
        await client.send(new sdk.AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: upload.UploadId }));
        aborted++;
      }
    } catch {
      // Listing uploads may be forbidden to these credentials; the upload itself is unaffected.
    }
    return aborted;
  }
}
