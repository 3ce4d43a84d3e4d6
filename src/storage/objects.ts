/** Object operations beyond read and upload: head, put, copy, delete, versions, presign. */
import type { HeadObjectCommandOutput } from "@aws-sdk/client-s3";
import { createHash } from "node:crypto";
import type { Config } from "../config.ts";
import { iso } from "./bodies.ts";
import type { S3Handle } from "./client.ts";
import { copyObject } from "./copy.ts";
import { toStorageError } from "./errors.ts";
import { errorContext, objectParams, type Operation, type SendOptions } from "./operation.ts";
import type { ObjectAddress, ObjectHead, ObjectStore, VersionInfo, WriteOptions } from "./types.ts";
import { bodyClient, checkEtag } from "./upload.ts";

const CHECKSUM_FIELDS = [["crc32", "ChecksumCRC32"], ["crc32c", "ChecksumCRC32C"], ["crc64nvme", "ChecksumCRC64NVME"], ["sha1", "ChecksumSHA1"], ["sha256", "ChecksumSHA256"]] as const;
const IF_ABSENT_HINT = "an object already exists at this key and if_absent was set; nothing was written. Choose another key, or call again without if_absent to replace it.";

/**
 * if_absent sends If-None-Match: * (S3 then refuses atomically), and asks
 * first: some stores ignore the header on some operations (Ceph RGW 16 on
 * CopyObject), and must not replace an object because of it.
 */
export async function refuseIfPresent({ client, sdk }: S3Handle, bucket: string, key: string, send?: SendOptions): Promise<void> {
  const present = await client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }), send).then(
    () => true,
    (err: { $metadata?: { httpStatusCode?: number } }) => {
      if (err.$metadata?.httpStatusCode === 404) return false;
      throw err;
    },
  );
  if (present) throw Object.assign(new Error("PreconditionFailed"), { name: "PreconditionFailed", $metadata: { httpStatusCode: 412 } });
}

/** DeleteObjects takes at most this many keys a request. */
const DELETE_BATCH = 1000;

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
  };
}

/**
 * The version id of the delete marker a failed HEAD ran into, or undefined.
 * S3 says so in x-amz-delete-marker (404 for the latest, 405 by version id);
 * Ceph RGW says nothing, so on a 404 the key's versions are asked.
 */
async function deleteMarkerBehind(err: unknown, addr: ObjectAddress, client: S3Handle["client"], sdk: S3Handle["sdk"], send: SendOptions): Promise<string | undefined> {
  const e = err as { $metadata?: { httpStatusCode?: number }; $response?: { headers?: Record<string, string> } };
  const headers = e.$response?.headers ?? {};
  if (headers["x-amz-delete-marker"] === "true") return headers["x-amz-version-id"] ?? addr.versionId ?? "null";
  if (e.$metadata?.httpStatusCode !== 404) return undefined;
  const listed = await client.send(new sdk.ListObjectVersionsCommand({ Bucket: addr.bucket, Prefix: addr.key, MaxKeys: 1000 }), send);
  const marker = (listed.DeleteMarkers ?? []).find((m) => m.Key === addr.key && (addr.versionId ? m.VersionId === addr.versionId : m.IsLatest));
  return marker ? (marker.VersionId ?? "null") : undefined;
}

export function createObjectStore(config: Config, getClient: () => Promise<S3Handle>, operation: Operation): ObjectStore {
  return {
    headObject: (addr, signal) =>
      operation(errorContext(addr), signal, async ({ client, sdk }, send) => {
        try {
          return headOf(await client.send(new sdk.HeadObjectCommand({ ...objectParams(addr), ChecksumMode: "ENABLED" }), send));
        } catch (err) {
          const marker = await deleteMarkerBehind(err, addr, client, sdk, send).catch(() => undefined);
          if (marker === undefined) throw err;
          return { ...headOf({ $metadata: {} }), size: null, storage_class: null, version_id: marker, delete_marker: true };
        }
      }),

    putObject: (req, signal) =>
      operation({ bucket: req.bucket, key: req.key, hints: { PreconditionFailed: IF_ABSENT_HINT } }, signal, async (s3, send) => {
        if (req.ifAbsent) await refuseIfPresent(s3, req.bucket, req.key, send);
        const md5 = createHash("md5").update(req.body).digest();
        const out = await bodyClient(s3, req.key).send(
          new s3.sdk.PutObjectCommand({ Bucket: req.bucket, Key: req.key, Body: req.body, ContentLength: req.body.length, ContentMD5: md5.toString("base64"), ...writeParams(req) }),
          send,
        );
        checkEtag(out, md5, req, "object");
        return { etag: out.ETag ?? null, version_id: out.VersionId ?? null };
      }),

    copyObject: async (req, signal) => {
      try {
        return await copyObject(await getClient(), req, config.multipartCopyThreshold, signal);
      } catch (err) {
        throw toStorageError(err, { bucket: req.bucket, key: req.key, hints: { PreconditionFailed: "an object already exists at the destination and if_absent was set, or the source changed during the copy; nothing was written." } });
      }
    },

    deleteObject: (addr, signal) =>
      operation(errorContext(addr), signal, async ({ client, sdk }, send) => {
        const out = await client.send(new sdk.DeleteObjectCommand(objectParams(addr)), send);
        return { delete_marker: out.DeleteMarker ?? false, version_id: out.VersionId ?? null };
      }),

    deleteObjects: async (bucket, keys, signal) => {
      const result = { deleted: [] as { key: string; delete_marker: boolean }[], failed: [] as { key: string; code: string; message: string }[] };
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        const batch = keys.slice(i, i + DELETE_BATCH);
        const out = await operation({ bucket }, signal, ({ client, sdk }, send) =>
          client.send(new sdk.DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: false } }), send),
        );
        for (const d of out.Deleted ?? []) result.deleted.push({ key: d.Key ?? "", delete_marker: d.DeleteMarker ?? false });
        for (const e of out.Errors ?? []) result.failed.push({ key: e.Key ?? "", code: e.Code ?? "UnknownError", message: e.Message ?? "" });
      }
      return result;
    },

    listKeys: async (bucket, prefix, limit, signal) => {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await operation({ bucket }, signal, ({ client, sdk }, send) =>
          client.send(new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix || undefined, MaxKeys: Math.min(1000, limit + 1 - keys.length), ContinuationToken: token }), send),
        );
        for (const o of page.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token && keys.length <= limit);
      return { keys: keys.slice(0, limit), more: keys.length > limit || token !== undefined };
    },

    listObjectVersions: (req, signal) =>
      operation({ bucket: req.bucket }, signal, async ({ client, sdk }, send) => {
        const out = await client.send(
          new sdk.ListObjectVersionsCommand({ Bucket: req.bucket, MaxKeys: req.maxKeys, Prefix: req.prefix || undefined, KeyMarker: req.keyMarker, VersionIdMarker: req.versionIdMarker }),
          send,
        );
        const entry = (v: { Key?: string; VersionId?: string; IsLatest?: boolean; LastModified?: Date }, marker: boolean, size: number | null, etag: string | null): VersionInfo => ({
          key: v.Key ?? "",
          version_id: v.VersionId ?? null,
          is_latest: v.IsLatest ?? false,
          is_delete_marker: marker,
          size,
          last_modified: iso(v.LastModified),
          etag,
        });
        // S3 lists versions and delete markers apart; together, per key the newest first, as S3 orders each list.
        const all = [
          ...(out.Versions ?? []).map((v) => entry(v, false, v.Size ?? null, v.ETag ?? null)),
          ...(out.DeleteMarkers ?? []).map((m) => entry(m, true, null, null)),
        ].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : (b.last_modified ?? "").localeCompare(a.last_modified ?? "")));
        const versions = all.slice(0, req.maxKeys);
        const truncated = (out.IsTruncated ?? false) || versions.length < all.length;
        return {
          versions,
          is_truncated: truncated,
          next_key_marker: truncated ? (out.NextKeyMarker ?? null) : null,
          next_version_id_marker: truncated ? (out.NextVersionIdMarker ?? null) : null,
        };
      }),

    presign: async (req) => {
      const [{ presignClient, sdk }, { getSignedUrl }] = await Promise.all([getClient(), import("@aws-sdk/s3-request-presigner")]);
      const command =
        req.method === "PUT"
          ? new sdk.PutObjectCommand({ Bucket: req.bucket, Key: req.key, ...(req.contentType ? { ContentType: req.contentType } : {}) })
          : new sdk.GetObjectCommand({ ...objectParams(req), ...(req.responseContentDisposition ? { ResponseContentDisposition: req.responseContentDisposition } : {}) });
      try {
        const url = await getSignedUrl(presignClient, command, { expiresIn: req.expiresIn });
        const headers: Record<string, string> = req.method === "PUT" && req.contentType ? { "Content-Type": req.contentType } : {};
        return { url, headers };
      } catch (err) {
        throw toStorageError(err, errorContext(req));
      }
    },
  };
}
