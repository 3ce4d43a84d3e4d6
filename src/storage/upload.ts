import type { S3Client } from "@aws-sdk/client-s3";
import type { S3Handle } from "./client.ts";
import { CreateAttempts } from "./orphaned-uploads.ts";
import type { UploadRequest, UploadResult } from "./types.ts";

const MiB = 1024 * 1024;
/** S3's limits: at most 10,000 parts, each at least 5 MiB (but the last). */
export const MAX_PARTS = 10_000;
export const MIN_PART_SIZE = 8 * MiB;
/** Parts buffered at once stay under this, whatever the file size. */
const BUFFER_BUDGET = 64 * MiB;

/**
 * Part size for a file: 8 MiB, grown in whole MiB so that even a 5 TiB file
 * fits in 10,000 parts.
 */
export function partSizeFor(size: number): number {
  const needed = Math.ceil(size / MAX_PARTS / MiB) * MiB;
  return Math.max(MIN_PART_SIZE, needed);
}

/** Parts uploaded concurrently: 4, fewer when parts are huge, to bound memory. */
export function queueSizeFor(partSize: number): number {
  return Math.max(1, Math.min(4, Math.floor(BUFFER_BUDGET / partSize)));
}

/**
 * Streams a body to S3 with lib-storage: one PutObject when it fits in one part,
 * multipart above that. Whatever fails or is cancelled, a started multipart
 * upload is aborted before this returns, so nothing is left behind.
 */
export async function uploadObject({ client, sdk }: S3Handle, req: UploadRequest, signal?: AbortSignal): Promise<UploadResult> {
  const { Upload } = await import("@aws-sdk/lib-storage");
  // lib-storage sends its commands without an abort signal and keeps uploading
  // other parts after one fails. This controller is aborted by the caller's
  // signal or by the first failed request, so every later request fails fast;
  // AbortMultipartUpload alone is exempt, so the cleanup always goes out.
  const stop = new AbortController();
  const onCallerAbort = () => stop.abort(signal?.reason);
  if (signal?.aborted) onCallerAbort();
  signal?.addEventListener("abort", onCallerAbort, { once: true });
  const creation = new CreateAttempts();
  let uploadId: string | undefined;
  const guardedClient = Object.create(client, {
    send: {
      value: async (command: object, options?: object) => {
        if (command instanceof sdk.AbortMultipartUploadCommand) return client.send(command, options);
        const isCreate = command instanceof sdk.CreateMultipartUploadCommand;
        if (isCreate) creation.started();
        try {
          const out = await client.send(command as never, { ...options, abortSignal: stop.signal });
          if (isCreate) {
            creation.ended(out);
            uploadId = (out as { UploadId?: string }).UploadId;
          }
          return out;
        } catch (err) {
          if (isCreate) creation.ended(err);
          stop.abort(err);
          throw err;
        }
      },
    },
  }) as S3Client;

  const partSize = partSizeFor(req.size);
  const upload = new Upload({
    client: guardedClient,
    partSize,
    queueSize: queueSizeFor(partSize),
    leavePartsOnError: false,
    params: {
      Bucket: req.bucket,
      Key: req.key,
      Body: req.body as never,
      ContentLength: req.size,
      ContentType: req.contentType,
      ...(req.storageClass ? { StorageClass: req.storageClass as never } : {}),
      ...(req.cacheControl ? { CacheControl: req.cacheControl } : {}),
    },
  });
  try {
    const out = await upload.done();
    if (out.ETag) return { etag: out.ETag, version_id: out.VersionId ?? null };
    // Ceph RGW 16 answers CompleteMultipartUpload with an empty ETag: ask for it.
    const head = await client.send(
      new sdk.HeadObjectCommand({ Bucket: req.bucket, Key: req.key, ...(out.VersionId ? { VersionId: out.VersionId } : {}) }),
      { abortSignal: signal },
    );
    return { etag: head.ETag ?? null, version_id: out.VersionId ?? head.VersionId ?? null };
  } finally {
    signal?.removeEventListener("abort", onCallerAbort);
    await creation.abortOrphans({ client, sdk }, req.bucket, req.key, uploadId);
  }
}
