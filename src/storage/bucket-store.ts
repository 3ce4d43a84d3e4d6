/**
 * A store's buckets and listings: list, head, create and delete buckets, a
 * page of objects, and the multipart uploads left in a bucket.
 */
import type { Config } from "../config/config.ts";
import { s3Uri } from "../runtime/errors.ts";
import { listBucketPage } from "./bucket-listing.ts";
import { stalledListing, toStorageError } from "./errors.ts";
import { iso } from "./iso-date.ts";
import type { StoreQuirks } from "./quirks.ts";
import type { S3Handle } from "./requests/client.ts";
import { sendListObjectsV2 } from "./requests/fast-list.ts";
import type { Operation, SendOptions } from "./requests/operation.ts";
import type { IncompleteUpload, ListObjectsRequest, ObjectPage, Storage } from "./types.ts";

type BucketStore = Pick<
  Storage,
  "listBuckets" | "headBucket" | "createBucket" | "deleteBucket" | "listObjects" | "listIncompleteUploads"
>;

export function createBucketStore(config: Config, operation: Operation, quirks: StoreQuirks): BucketStore {
  return {
    listBuckets: (req, signal) => listBucketPage(operation, req, signal),

    headBucket: (bucket, signal) =>
      operation({ bucket }, signal, async ({ client, sdk }, send) => {
        await client.send(new sdk.HeadBucketCommand({ Bucket: bucket }), send);
      }),

    createBucket: (bucket, signal) =>
      operation({ bucket }, signal, async ({ client, sdk }, send) => {
        // S3 in us-east-1 (and Ceph) answer 200 to creating a bucket you already own (quirks.createOwnedBucketSucceeds),
        // so ask first: the model should learn the bucket was not new.
        const existing = !quirks.createOwnedBucketSucceeds
          ? undefined
          : await client.send(new sdk.HeadBucketCommand({ Bucket: bucket }), send).then(
              () => "BucketAlreadyOwnedByYou" as const,
              (err: { $metadata?: { httpStatusCode?: number } }) => {
                const status = err.$metadata?.httpStatusCode;
                if (status === 404) return undefined;
                if (status === 403) return "BucketAlreadyExists" as const;
                throw err;
              },
            );
        if (existing) throw toStorageError({ name: existing, $metadata: { httpStatusCode: 409 } }, { bucket });
        // us-east-1 is the one region that must not be named as a location constraint.
        const location = config.region === "us-east-1" ? undefined : { LocationConstraint: config.region as never };
        const out = await client.send(
          new sdk.CreateBucketCommand({ Bucket: bucket, ...(location ? { CreateBucketConfiguration: location } : {}) }),
          send,
        );
        return { location: out.Location ?? null };
      }),

    deleteBucket: (bucket, signal) =>
      operation({ bucket }, signal, async ({ client, sdk }, send) => {
        await client.send(new sdk.DeleteBucketCommand({ Bucket: bucket }), send);
      }),
    listObjects: (req, signal) => listObjectsPage(operation, req, signal),
    listIncompleteUploads: (bucket, prefix, limit, sizeLimit, signal) =>
      listIncompleteUploads(operation, bucket, prefix, limit, sizeLimit, signal),
  };
}

/** One page of a listing as the tool gives it: cut to what was asked where a store sends more. */
function listObjectsPage(
  operation: Operation,
  req: ListObjectsRequest,
  signal: AbortSignal | undefined,
): Promise<ObjectPage> {
  return operation({ bucket: req.bucket }, signal, async (s3, send) => {
    const out = await sendListObjectsV2(
      s3,
      {
        Bucket: req.bucket,
        MaxKeys: req.maxKeys,
        ...(req.prefix ? { Prefix: req.prefix } : {}),
        ...(req.delimiter ? { Delimiter: req.delimiter } : {}),
        ...(req.continuationToken ? { ContinuationToken: req.continuationToken } : {}),
        ...(req.startAfter && !req.continuationToken ? { StartAfter: req.startAfter } : {}),
      },
      send,
    );
    // S3 counts keys and common prefixes against MaxKeys; a store that sends more is cut to what was asked.
    const keptObjects = out.contents.slice(0, req.maxKeys);
    const keptPrefixes = out.commonPrefixes.slice(0, Math.max(0, req.maxKeys - keptObjects.length));
    const cut = keptObjects.length < out.contents.length || keptPrefixes.length < out.commonPrefixes.length;
    const truncated = out.isTruncated || cut;
    return {
      objects: keptObjects.map((o) => ({
        key: o.key,
        size: o.size,
        last_modified: o.lastModified,
        etag: o.etag,
        storage_class: o.storageClass,
      })),
      common_prefixes: keptPrefixes,
      is_truncated: truncated,
      next_continuation_token: truncated ? out.nextContinuationToken : null,
      ...(cut ? { store_ignored_max_keys: true } : {}),
    };
  });
}

/** The bucket's multipart uploads under `prefix` (at most `limit`), the first `sizeLimit` with the bytes their parts hold. */
function listIncompleteUploads(
  operation: Operation,
  bucket: string,
  prefix: string,
  limit: number,
  sizeLimit: number,
  signal: AbortSignal | undefined,
): Promise<{ uploads: IncompleteUpload[]; more: boolean }> {
  return operation({ bucket }, signal, async ({ client, sdk }, send) => {
    const uploads: IncompleteUpload[] = [];
    let keyMarker: string | undefined;
    let idMarker: string | undefined;
    let more = false;
    do {
      const out = await client.send(
        new sdk.ListMultipartUploadsCommand({
          Bucket: bucket,
          Prefix: prefix || undefined,
          KeyMarker: keyMarker,
          UploadIdMarker: idMarker,
          MaxUploads: 1000,
        }),
        send,
      );
      for (const u of out.Uploads ?? []) {
        if (uploads.length >= limit) {
          more = true;
          break;
        }
        uploads.push({ key: u.Key ?? "", upload_id: u.UploadId ?? "", initiated: iso(u.Initiated), bytes: null });
      }
      more ||= (out.IsTruncated ?? false) && uploads.length >= limit;
      const goOn = (out.IsTruncated ?? false) && uploads.length < limit;
      // A store that says "more" with no marker, or the same markers again, would end the count early or loop.
      if (goOn && (!out.NextKeyMarker || (out.NextKeyMarker === keyMarker && out.NextUploadIdMarker === idMarker)))
        throw stalledListing(s3Uri(bucket, prefix));
      keyMarker = goOn ? out.NextKeyMarker : undefined;
      idMarker = out.NextUploadIdMarker;
    } while (keyMarker);
    // Parts are what is billed: count them for the first uploads (one ListParts each, paged).
    for (const u of uploads.slice(0, sizeLimit)) u.bytes = await partBytes({ client, sdk }, bucket, u, send);
    return { uploads, more };
  });
}

/** The bytes an upload's parts hold (ListParts, paged). */
async function partBytes(
  { client, sdk }: Pick<S3Handle, "client" | "sdk">,
  bucket: string,
  u: IncompleteUpload,
  send: SendOptions,
): Promise<number> {
  let bytes = 0;
  let partMarker: string | undefined;
  do {
    const parts = await client.send(
      new sdk.ListPartsCommand({
        Bucket: bucket,
        Key: u.key,
        UploadId: u.upload_id,
        PartNumberMarker: partMarker,
      }),
      send,
    );
    for (const p of parts.Parts ?? []) bytes += p.Size ?? 0;
    if (parts.IsTruncated && (!parts.NextPartNumberMarker || parts.NextPartNumberMarker === partMarker))
      throw stalledListing(s3Uri(bucket, u.key));
    partMarker = parts.IsTruncated ? parts.NextPartNumberMarker : undefined;
  } while (partMarker);
  return bytes;
}
