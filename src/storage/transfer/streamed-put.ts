/**
 * One streamed PutObject for an upload whose MD5 is known before its bytes:
 * a copy from another store of a single-part object, whose ETag is the MD5 of
 * its bytes. The source's ETag goes out as the request's Content-MD5, so the
 * destination itself checks every byte against the source's own promise and
 * stores nothing unless they match: the check end to end costs this server no
 * hashing at all, where parts need two passes over every byte (the source's
 * MD5, then each part's Content-MD5), and on cores shared with the stores
 * that CPU is the copy's speed (BENCH_ONLY=stores; docs/stores.md).
 *
 * Taken only where it is at least as good as parts (s3-storage.ts,
 * streamingFor): a near destination (one connection carries what a few parts
 * would; far away, parts in flight are what makes the speed: streamed parts,
 * streamed-parts.ts), up to S3's limit for one PUT, and what `streamable`
 * asks of any streamed body. Being one request, a failure or a cancel
 * leaves nothing at the key and no multipart upload behind.
 */
import type { S3Handle } from "../requests/client.ts";
import { plainPut, putHeaders } from "../requests/quick-requests.ts";
import { quickAddressable } from "../requests/quick-transport.ts";
import type { UploadRequest, UploadResult } from "../types.ts";
import { sendStreamed } from "./streamed-body.ts";
import { checkEtag } from "./upload-bytes.ts";

/** S3's limit for one PutObject (Ceph RGW's rgw_max_put_size by default too). */
export const STREAM_PUT_MAX = 5 * 1024 ** 3;

/**
 * Whether `req` can go out streamed (one PUT, or parts: streamed-parts.ts):
 * the source's chunks can be handed over, header values the quick requests
 * may send as they are, no checksums the SDK would add (custom endpoints),
 * and an addressable bucket.
 */
export async function streamable(s3: S3Handle, req: UploadRequest): Promise<boolean> {
  // The bytes must be handed over (a source that can only be copied from is not one this was built for).
  if (!req.takeAt || !plainPut(req)) return false;
  if ((await s3.fetchClient.config.requestChecksumCalculation()) !== "WHEN_REQUIRED") return false;
  return quickAddressable(s3, req.bucket);
}

/**
 * Sends the whole body as one PutObject with Content-MD5 `md5` (hex), reading
 * the source in order as fetch asks for more. Nothing for `idleMs` (no read
 * asked for, or no answer once all was sent) fails it.
 */
export async function putStreamed(
  s3: S3Handle,
  req: UploadRequest,
  md5: string,
  signal: AbortSignal | undefined,
  idleMs: number,
): Promise<UploadResult> {
  const digest = Buffer.from(md5, "hex");
  const answer = await sendStreamed(
    s3,
    {
      method: "PUT",
      bucket: req.bucket,
      key: req.key,
      headers: putHeaders(req, digest, req.encryption ?? s3.encryption),
    },
    req.takeAt!,
    0,
    req.size,
    { signal, idleMs, onTaken: (_, total) => req.onProgress?.(total) },
  );
  const etag = answer.headers.get("etag") ?? undefined;
  checkEtag(
    {
      ETag: etag,
      ServerSideEncryption: answer.headers.get("x-amz-server-side-encryption") ?? undefined,
      SSECustomerAlgorithm: answer.headers.get("x-amz-server-side-encryption-customer-algorithm") ?? undefined,
    },
    digest,
    req,
    "object",
  );
  return { etag: etag ?? null, version_id: answer.headers.get("x-amz-version-id") };
}
