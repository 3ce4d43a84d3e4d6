/** Object operations beyond read and upload: head, put, copy, delete, versions, presign. */
import { createHash } from "node:crypto";
import type { ListObjectVersionsCommandOutput } from "@aws-sdk/client-s3";
import type { Config } from "../config/config.ts";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import { copyObject } from "./copy.ts";
import { archivedHint, stalledListing, toStorageError, writeDeniedHint } from "./errors.ts";
import { iso } from "./iso-date.ts";
import { headOf, IF_ABSENT_HINT, refuseIfPresent, writeParams } from "./object-params.ts";
import { quirksOf } from "./quirks.ts";
import { fetchClientFor, type S3Handle } from "./requests/client.ts";
import { sendListObjectsV2 } from "./requests/fast-list.ts";
import { errorContext, type Operation, objectParams, type SendOptions } from "./requests/operation.ts";
import { checkEtag } from "./transfer/upload-bytes.ts";
import type { ObjectAddress, ObjectStore, PresignRequest, VersionInfo } from "./types.ts";

/** DeleteObjects takes at most this many keys a request. */
const DELETE_BATCH = 1000;

/**
 * The version id of the delete marker a failed HEAD ran into, or undefined.
 * S3 says so in x-amz-delete-marker (404 for the latest, 405 by version id);
 * a store that may not (quirks.saysDeleteMarkerOn404 false: Ceph RGW says
 * nothing) has the key's versions asked on a 404.
 */
export async function deleteMarkerBehind(
  err: unknown,
  addr: ObjectAddress,
  { client, sdk, quirks }: Pick<S3Handle, "client" | "sdk" | "quirks">,
  send: SendOptions,
): Promise<string | undefined> {
  const e = err as { $metadata?: { httpStatusCode?: number }; $response?: { headers?: Record<string, string> } };
  const headers = e.$response?.headers ?? {};
  if (headers["x-amz-delete-marker"] === "true") return headers["x-amz-version-id"] ?? addr.versionId ?? "null";
  if (e.$metadata?.httpStatusCode !== 404 || quirks.saysDeleteMarkerOn404) return undefined;
  const listed = await client.send(
    new sdk.ListObjectVersionsCommand({ Bucket: addr.bucket, Prefix: addr.key, MaxKeys: 1000 }),
    send,
  );
  const marker = (listed.DeleteMarkers ?? []).find(
    (m) => m.Key === addr.key && (addr.versionId ? m.VersionId === addr.versionId : m.IsLatest),
  );
  return marker ? (marker.VersionId ?? "null") : undefined;
}

export function createObjectStore(
  config: Config,
  getClient: () => Promise<S3Handle>,
  operation: Operation,
): ObjectStore {
  return {
    headObject: (addr, signal) =>
      operation(errorContext(addr), signal, async (handle, send) => {
        const { client, sdk } = handle;
        try {
          return headOf(
            await client.send(new sdk.HeadObjectCommand({ ...objectParams(addr), ChecksumMode: "ENABLED" }), send),
          );
        } catch (err) {
          const marker = await deleteMarkerBehind(err, addr, handle, send).catch(() => undefined);
          if (marker === undefined) throw err;
          return {
            ...headOf({ $metadata: {} }),
            size: null,
            storage_class: null,
            version_id: marker,
            delete_marker: true,
          };
        }
      }),

    putObject: (req, signal) =>
      operation(
        {
          bucket: req.bucket,
          key: req.key,
          hints: {
            PreconditionFailed: IF_ABSENT_HINT,
            AccessDenied: writeDeniedHint(req.encryption ?? config.encryption),
          },
        },
        signal,
        async (s3, send) => {
          if (req.ifAbsent) await refuseIfPresent(s3, { bucket: req.bucket, key: req.key, oneRequest: true }, send);
          const md5 = createHash("md5").update(req.body).digest();
          const out = await fetchClientFor(s3, req.key).send(
            new s3.sdk.PutObjectCommand({
              Bucket: req.bucket,
              Key: req.key,
              Body: req.body,
              ContentLength: req.body.length,
              ContentMD5: md5.toString("base64"),
              ...writeParams(req),
            }),
            send,
          );
          checkEtag(out, md5, req, "object");
          return { etag: out.ETag ?? null, version_id: out.VersionId ?? null };
        },
      ),

    copyObject: (req, signal) => {
      const ctx = {
        bucket: req.bucket,
        key: req.key,
        hints: {
          PreconditionFailed:
            "an object already exists at the destination and if_absent was set, or the source changed during the copy; nothing was written.",
          AccessDenied: writeDeniedHint(req.encryption ?? config.encryption),
          // The source is what is archived, not the destination the error is named for.
          ObjectArchived: `the source is the archived one; ${archivedHint(req.source.bucket, req.source.key)}`,
          NotImplemented: quirksOf(config.provider).copiesEncryptedObjects
            ? "the store does not implement this copy server-side; get_object mode download and upload_file instead, or ask the user."
            : "the store may not copy this object server-side: some stores (Ceph RGW 16 among them) cannot copy an encrypted object (SSE-KMS or a customer key); get_object mode download and upload_file instead, or ask the user.",
        },
      };
      return copyObject(req, config.multipartCopyThreshold, (fn, uncancellable) =>
        operation(ctx, uncancellable ? undefined : signal, fn),
      );
    },

    deleteObject: (addr, signal) =>
      operation(errorContext(addr), signal, async ({ client, sdk }, send) => {
        const out = await client.send(new sdk.DeleteObjectCommand(objectParams(addr)), send);
        return { delete_marker: out.DeleteMarker ?? false, version_id: out.VersionId ?? null };
      }),

    deleteObjects: (bucket, keys, signal) => deleteInBatches(operation, bucket, keys, signal),

    listKeys: (bucket, prefix, limit, signal) => listKeys(operation, bucket, prefix, limit, signal),

    listObjectVersions: (req, signal) =>
      operation({ bucket: req.bucket }, signal, async ({ client, sdk }, send) => {
        const out = await client.send(
          new sdk.ListObjectVersionsCommand({
            Bucket: req.bucket,
            MaxKeys: req.maxKeys,
            Prefix: req.prefix || undefined,
            KeyMarker: req.keyMarker,
            VersionIdMarker: req.versionIdMarker,
          }),
          send,
        );
        return versionsPage(out, req.maxKeys);
      }),

    presign: (req) => presign(config, getClient, req),
  };
}

/** DeleteObjects, DELETE_BATCH keys a request: what was deleted (a marker, in a versioned bucket) and what the store refused. */
async function deleteInBatches(operation: Operation, bucket: string, keys: string[], signal: AbortSignal | undefined) {
  const result = {
    deleted: [] as { key: string; delete_marker: boolean }[],
    failed: [] as { key: string; code: string; message: string }[],
  };
  for (let i = 0; i < keys.length; i += DELETE_BATCH) {
    const batch = keys.slice(i, i + DELETE_BATCH);
    const out = await operation({ bucket }, signal, ({ client, sdk }, send) =>
      client.send(
        new sdk.DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: false },
        }),
        send,
      ),
    );
    for (const d of out.Deleted ?? [])
      result.deleted.push({ key: d.Key ?? "", delete_marker: d.DeleteMarker ?? false });
    for (const e of out.Errors ?? [])
      result.failed.push({ key: e.Key ?? "", code: e.Code ?? "UnknownError", message: e.Message ?? "" });
  }
  return result;
}

/** Up to `limit` keys under `prefix`, and whether more follow. */
async function listKeys(
  operation: Operation,
  bucket: string,
  prefix: string,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<{ keys: string[]; more: boolean }> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await operation({ bucket }, signal, (s3, send) =>
      sendListObjectsV2(
        s3,
        {
          Bucket: bucket,
          Prefix: prefix || undefined,
          MaxKeys: Math.min(1000, limit + 1 - keys.length),
          ContinuationToken: token,
        },
        send,
      ),
    );
    for (const o of page.contents) keys.push(o.key);
    // "More" with no token, or the same one again, would end the listing early (reported as complete) or loop.
    if (page.isTruncated && (!page.nextContinuationToken || page.nextContinuationToken === token))
      throw stalledListing(s3Uri(bucket, prefix));
    token = page.isTruncated ? page.nextContinuationToken! : undefined;
  } while (token && keys.length <= limit);
  return { keys: keys.slice(0, limit), more: keys.length > limit || token !== undefined };
}

/** A page of ListObjectVersions as the tool gives it: versions and delete markers together, cut to max_keys. */
function versionsPage(out: ListObjectVersionsCommandOutput, maxKeys: number | undefined) {
  const entry = (
    v: { Key?: string; VersionId?: string; IsLatest?: boolean; LastModified?: Date },
    marker: boolean,
    size: number | null,
    etag: string | null,
  ): VersionInfo => ({
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
  ].sort((a, b) =>
    a.key < b.key ? -1 : a.key > b.key ? 1 : (b.last_modified ?? "").localeCompare(a.last_modified ?? ""),
  );
  const versions = all.slice(0, maxKeys);
  const cut = versions.length < all.length;
  const truncated = (out.IsTruncated ?? false) || cut;
  // A page cut to max_keys continues after its last entry (S3's marker semantics), not after the store's.
  const last = versions.at(-1);
  return {
    versions,
    is_truncated: truncated,
    next_key_marker: !truncated ? null : cut ? (last?.key ?? null) : (out.NextKeyMarker ?? null),
    next_version_id_marker: !truncated ? null : cut ? (last?.version_id ?? null) : (out.NextVersionIdMarker ?? null),
  };
}

/** A presigned GET or PUT of one object; never for a store whose objects need the server's customer key. */
async function presign(
  config: Config,
  getClient: () => Promise<S3Handle>,
  req: PresignRequest,
): Promise<{ url: string; headers: Record<string, string> }> {
  // A link to an SSE-C object works only with the key's headers, which its user would need: the key never leaves.
  if (config.customerKey)
    throw new ActionableError({
      resource: s3Uri(req.bucket, req.key),
      code: "CustomerKeyNeeded",
      message:
        "This store's objects are encrypted with the server's customer key (SSE-C): a link would work only for someone who also sends that key, which the server never gives out.",
      hint: "download the object with get_object mode download and share the file another way, or ask the user.",
    });
  const [{ presignClient, sdk }, { getSignedUrl }] = await Promise.all([
    getClient(),
    import("@aws-sdk/s3-request-presigner"),
  ]);
  const command =
    req.method === "PUT"
      ? new sdk.PutObjectCommand({
          Bucket: req.bucket,
          Key: req.key,
          ...(req.contentType ? { ContentType: req.contentType } : {}),
        })
      : new sdk.GetObjectCommand({
          ...objectParams(req),
          ...(req.responseContentDisposition ? { ResponseContentDisposition: req.responseContentDisposition } : {}),
        });
  try {
    const url = await getSignedUrl(presignClient, command, { expiresIn: req.expiresIn });
    const headers: Record<string, string> =
      req.method === "PUT" && req.contentType ? { "Content-Type": req.contentType } : {};
    return { url, headers };
  } catch (err) {
    throw toStorageError(err, errorContext(req));
  }
}
