/** What put, copy and head share: mapping answers and write headers, and the if_absent check (one HEAD). */
import type { HeadObjectCommandOutput } from "@aws-sdk/client-s3";
import { iso } from "./iso-date.ts";
import type { S3Handle } from "./requests/client.ts";
import { encryptionParams } from "./requests/encryption.ts";
import type { SendOptions } from "./requests/operation.ts";
import { encryptionOf } from "./transfer/bodies.ts";
import type { ObjectHead, WriteOptions } from "./types.ts";

const CHECKSUM_FIELDS = [
  ["crc32", "ChecksumCRC32"],
  ["crc32c", "ChecksumCRC32C"],
  ["crc64nvme", "ChecksumCRC64NVME"],
  ["sha1", "ChecksumSHA1"],
  ["sha256", "ChecksumSHA256"],
] as const;

export function headOf(out: HeadObjectCommandOutput): ObjectHead {
  const checksums: Record<string, string> = {};
  for (const [name, field] of CHECKSUM_FIELDS) {
    const value = (out as unknown as Record<string, unknown>)[field];
    if (typeof value === "string") checksums[name] = value;
  }
  return {
    size: out.ContentLength ?? null,
    content_type: out.ContentType ?? null,
    etag: out.ETag ?? null,
    last_modified: iso(out.LastModified),
    version_id: out.VersionId ?? null,
    storage_class: out.StorageClass ?? "STANDARD",
    cache_control: out.CacheControl ?? null,
    content_encoding: out.ContentEncoding ?? null,
    content_disposition: out.ContentDisposition ?? null,
    metadata: out.Metadata ?? {},
    checksums,
    delete_marker: out.DeleteMarker ?? false,
    encryption: encryptionOf(out),
    restore: restoreOf(out.Restore),
    archive_status: out.ArchiveStatus ?? null,
    object_lock:
      out.ObjectLockMode || out.ObjectLockLegalHoldStatus || out.ObjectLockRetainUntilDate
        ? {
            mode: out.ObjectLockMode,
            retain_until: iso(out.ObjectLockRetainUntilDate) ?? undefined,
            legal_hold: out.ObjectLockLegalHoldStatus,
          }
        : null,
  };
}

/** x-amz-restore: `ongoing-request="true"`, or `ongoing-request="false", expiry-date="Fri, 21 Dec 2026 00:00:00 GMT"`. */
export function restoreOf(header: string | undefined): ObjectHead["restore"] {
  if (!header) return null;
  const ongoing = /ongoing-request="(true|false)"/.exec(header)?.[1];
  const expiry = /expiry-date="([^"]+)"/.exec(header)?.[1];
  const date = expiry ? new Date(expiry) : undefined;
  return {
    in_progress: ongoing === "true",
    expires: date && !Number.isNaN(date.getTime()) ? date.toISOString() : undefined,
  };
}

/** Headers of a write, shared by put and copy. */
export function writeParams(opts: WriteOptions) {
  return {
    ...(opts.contentType ? { ContentType: opts.contentType } : {}),
    ...(opts.cacheControl ? { CacheControl: opts.cacheControl } : {}),
    ...(opts.storageClass ? { StorageClass: opts.storageClass as never } : {}),
    ...(opts.metadata ? { Metadata: opts.metadata } : {}),
    ...(opts.ifAbsent ? { IfNoneMatch: "*" } : {}),
    ...encryptionParams(opts.encryption),
  };
}

export const IF_ABSENT_HINT =
  "an object already exists at this key and if_absent was set; nothing was written. Choose another key, or call again without if_absent to replace it.";

/**
 * if_absent sends If-None-Match: * (S3 then refuses atomically), and asks
 * first where that is not enough: a store that may ignore the header
 * (quirks.conditionalWrites false: Ceph RGW 16 on CopyObject) must not
 * replace an object because of it, and a write of many requests (a
 * multipart copy) is refused before it moves bytes.
 */
export async function refuseIfPresent(
  { client, sdk, quirks }: S3Handle,
  target: { bucket: string; key: string; oneRequest: boolean },
  send?: SendOptions,
): Promise<void> {
  if (target.oneRequest && quirks.conditionalWrites) return;
  const { bucket, key } = target;
  const present = await client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }), send).then(
    () => true,
    (err: { $metadata?: { httpStatusCode?: number } }) => {
      if (err.$metadata?.httpStatusCode === 404) return false;
      throw err;
    },
  );
  if (present)
    throw Object.assign(new Error("PreconditionFailed"), {
      name: "PreconditionFailed",
      $metadata: { httpStatusCode: 412 },
    });
}
