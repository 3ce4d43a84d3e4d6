/**
 * One streamed PutObject for an upload whose MD5 is known before its bytes:
 * a copy from another store of a single-part object, whose ETag is the MD5 of
 * its bytes. The source's ETag goes out as the request's Content-MD5, so the
 * destination itself checks every byte against the source's own promise and
 * stores nothing unless they match: the check end to end costs this server no
 * hashing at all, where parts need two passes over every byte (the source's
 * MD5, then each part's Content-MD5; Bun's MD5 runs at ~760 MB/s, and on two
 * cores shared with the stores that CPU was the copy's speed). 1 GiB between
 * two Ceph users on loopback: 4.1-4.9 s and 2.2-2.4 s of our CPU this way,
 * against rclone's 5.6-7.3 s and 4.5 s (scratch runs, docs/stores.md).
 *
 * Taken only where it is at least as good as parts (`streamFits`): a near
 * destination (one connection carries what a few parts would; far away,
 * parts in flight are what makes the speed), up to S3's limit for one PUT,
 * header values the quick requests may send as they are, and no checksums
 * the SDK would add (custom endpoints). Being one request, a failure or a
 * cancel leaves nothing at the key and no multipart upload behind.
 */
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import { releaseChunks } from "../runtime/memory.ts";
import type { S3Handle } from "./client.ts";
import { plainPut, putHeaders } from "./quick-requests.ts";
import { isNear } from "./nearness.ts";
import { quickAddressable, readText, sendQuick } from "./quick-transport.ts";
import type { UploadRequest, UploadResult } from "./types.ts";
import { checkEtag } from "./upload.ts";

/** S3's limit for one PutObject (Ceph RGW's rgw_max_put_size by default too). */
export const STREAM_PUT_MAX = 5 * 1024 ** 3;

/** Whether `req` (with the MD5 of its whole body known) would go out as one streamed PUT. */
export async function streamFits(s3: S3Handle, req: UploadRequest, signal?: AbortSignal): Promise<boolean> {
  // The bytes must be handed over (a source that can only be copied from is not one this was built for).
  if (req.size > STREAM_PUT_MAX || !req.takeAt || !plainPut(req)) return false;
  if ((await s3.fetchClient.config.requestChecksumCalculation()) !== "WHEN_REQUIRED") return false;
  return (await quickAddressable(s3, req.bucket)) && isNear(s3, req.bucket, signal);
}

/**
 * Sends the whole body as one PutObject with Content-MD5 `md5` (hex), reading
 * the source in order as fetch asks for more. Nothing for `idleMs` (no read
 * asked for, or no answer once all was sent) fails it.
 */
export async function putStreamed(s3: S3Handle, req: UploadRequest, md5: string, signal: AbortSignal | undefined, idleMs: number): Promise<UploadResult> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort, { once: true });
  let idle: ReturnType<typeof setTimeout> | undefined;
  const stalled = () => new ActionableError({ resource: s3Uri(req.bucket, req.key), code: "Timeout", message: `The destination stopped taking the upload (nothing for ${idleMs} ms); nothing was stored.`, hint: "retry later.", retryable: true });
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => stop.abort(stalled()), idleMs);
  };
  // The source's bytes as it holds them (streamFits asked for takeAt): a copy of every byte, in fresh memory, was a quarter of the CPU.
  const take = req.takeAt!;
  // The source's own error (a failed read) is the one to report, not fetch's word for the broken body.
  let readFailure: { err: unknown } | undefined;
  let sent = 0;
  /**
   * The last chunk handed over by the source, to free once fetch asks for the next. Were fetch ever to
   * keep a chunk longer, the bytes sent would not be the source's and the store's Content-MD5 check would refuse
   * them: an error, never a wrong object.
   */
  let taken: Uint8Array | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        arm();
        try {
          // Asked for more, fetch has taken the chunk before into its request buffer: a taken one is freed now, not at
          // the next collection (1 GiB between two stores on loopback: peaks of 120-126 MB against 149-182 MB).
          if (taken) releaseChunks([taken]);
          const chunk = (taken = await take(sent, req.size - sent));
          const n = chunk.length;
          if (n === 0) throw new ActionableError({ resource: s3Uri(req.bucket, req.key), code: "IncompleteBody", message: `The source ended after ${sent} of ${req.size} bytes; nothing was stored.`, hint: "retry the call.", retryable: true });
          sent += n;
          controller.enqueue(chunk);
          req.onProgress?.(sent);
          if (sent >= req.size) controller.close();
          arm();
        } catch (err) {
          readFailure ??= { err };
          stop.abort(err);
          controller.error(err);
        }
      },
    },
    { highWaterMark: 0 },
  );
  const digest = Buffer.from(md5, "hex");
  const headers = { ...putHeaders(req, digest), "content-length": String(req.size) };
  arm();
  try {
    const answer = await sendQuick(s3, { method: "PUT", bucket: req.bucket, key: req.key, headers, body }, stop.signal);
    // streamFits asked quickAddressable first: only a store that lost its credentials since ends here.
    if (!answer) throw { name: "CredentialsProviderError", message: "no credentials to sign the upload with" };
    const text = answer.status === 200 ? (await answer.body?.cancel().catch(() => {}), "") : await readText(answer.body, 64 * 1024).catch(() => undefined);
    if (answer.status !== 200) throw refusal(answer.status, text ?? "");
    const etag = answer.headers.get("etag") ?? undefined;
    checkEtag({ ETag: etag, ServerSideEncryption: answer.headers.get("x-amz-server-side-encryption") ?? undefined, SSECustomerAlgorithm: answer.headers.get("x-amz-server-side-encryption-customer-algorithm") ?? undefined }, digest, req, "object");
    return { etag: etag ?? null, version_id: answer.headers.get("x-amz-version-id") };
  } catch (err) {
    if (readFailure) throw readFailure.err;
    if (stop.signal.aborted && stop.signal.reason instanceof ActionableError) throw stop.signal.reason;
    throw err;
  } finally {
    clearTimeout(idle);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** A refused PUT as the SDK would have reported it (its code and message from the error document). */
function refusal(status: number, text: string): unknown {
  const field = (name: string) => text.match(new RegExp(`<${name}>([^<]*)</${name}>`))?.[1];
  return { name: field("Code") ?? "UnknownError", Code: field("Code"), message: field("Message") ?? "", $metadata: { httpStatusCode: status } };
}
