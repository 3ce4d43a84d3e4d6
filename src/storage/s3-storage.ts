import type { Config } from "../config/config.ts";
import { s3Uri } from "../runtime/errors.ts";
import { keptTransfersIn } from "../runtime/kept-transfers.ts";
import { listBucketPage } from "./bucket-listing.ts";
import { createSettingsStore } from "./bucket-settings.ts";
import { stalledListing, toStorageError, writeDeniedHint } from "./errors.ts";
import { iso } from "./iso-date.ts";
import { createLockAndRestoreStore } from "./lock-and-restore.ts";
import { readObjectRange } from "./object-range.ts";
import { createObjectStore } from "./objects.ts";
import { quirksOf } from "./quirks.ts";
import { lazyS3Client } from "./requests/client.ts";
import { sendListObjectsV2 } from "./requests/fast-list.ts";
import { errorContext, objectParams, operationRunner } from "./requests/operation.ts";
import { quickGet, quickGetFits } from "./requests/quick-requests.ts";
import { metaOf } from "./transfer/bodies.ts";
import { copyAcrossStores } from "./transfer/cross-copy.ts";
import { etagMd5, orderedCheck, promisesOf } from "./transfer/integrity.ts";
import { isNear } from "./transfer/nearness.ts";
import { partSizeFor } from "./transfer/part-sizes.ts";
import { openDownload } from "./transfer/ranged.ts";
import { putStreamed, STREAM_PUT_MAX, streamable } from "./transfer/streamed-put.ts";
import { uploadObject } from "./transfer/upload.ts";
import { hasKeptUpload } from "./transfer/upload-resume.ts";
import type { IncompleteUpload, PieceSink, Storage } from "./types.ts";

/** The Storage implementation over the AWS SDK; the only place commands are sent. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a known exception (docs/architecture.md), to be split into named steps
export function createS3Storage(config: Config): Storage {
  const getClient = lazyS3Client(config);
  // What this store does differently (quirks.ts): read where it matters.
  const quirks = quirksOf(config.provider);

  const operation = operationRunner(config, getClient);
  // Transfers cut short are recorded per store (its endpoint) to resume.
  const kept = keptTransfersIn(config.stateDir);
  const keptStore = config.endpointUrl ?? `aws:${config.region}`;
  const resume = { kept, store: keptStore };

  const storage: Storage = {
    ...createObjectStore(config, getClient, operation),
    ...createSettingsStore(operation),
    ...createLockAndRestoreStore(operation, quirks),

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

    listObjects: (req, signal) =>
      operation({ bucket: req.bucket }, signal, async (s3, send) => {
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
      }),

    readObjectHead: (addr, maxBytes, signal, offset = 0, pinTo) =>
      readObjectRange(operation, addr, maxBytes, signal, offset, pinTo),

    // The operation deadline bounds the wait for the first answer's headers; bodies then have the idle timeout.
    openObjectDownload: (addr, signal, { onProgress, listed, paced } = {}) =>
      operation(errorContext(addr), signal, async (s3, send) => {
        const quick = quickGetFits(addr.key, listed, addr.versionId)
          ? (stop: AbortSignal) => quickGet(s3, addr.bucket, addr.key, listed, stop, send.requestTimeout)
          : undefined;
        const download = await openDownload(s3, objectParams(addr), {
          signal,
          requestTimeout: send.requestTimeout,
          idleTimeout: config.requestTimeoutMs,
          ...(quick ? { quick } : {}),
          ...(paced ? { paced } : {}),
          answersFast: () => isNear(s3, addr.bucket, signal),
        });
        const { first, whole } = download;
        const ctx = errorContext(addr);
        const meta = metaOf(first);
        // The whole object's promises (its checksums where a whole answer sent them, else its ETag's MD5), checked over all
        // ranges in order; none, no check.
        const { checksums } = promisesOf(first, whole);
        const md5 = checksums.length > 0 ? undefined : etagMd5(first.ETag, encryptionOf(first));
        const check = orderedCheck({ checksums, md5 }, ctx);
        // Progress counts bytes as they arrive, over all ranges.
        let arrived = 0;
        const received = onProgress && ((bytes: number) => onProgress((arrived += bytes)));
        const size = whole ? first.ContentLength : meta.size >= 0 ? meta.size : undefined;
        const carried = { cache_control: first.CacheControl ?? null, metadata: first.Metadata ?? {} };
        // A ranged download of an object with an ETag and a size can be kept when cut and resumed (local/kept-download.ts).
        const resume =
          download.restFrom !== undefined && size !== undefined && first.ETag
            ? {
                identity: {
                  store: keptStore,
                  bucket: addr.bucket,
                  key: addr.key,
                  ...(first.VersionId ? { version_id: first.VersionId } : {}),
                  etag: first.ETag,
                  size,
                },
                from: download.restFrom,
              }
            : undefined;
        const deliver = (sink: PieceSink, wantsMore?: () => boolean, have?: readonly [number, number][]) => {
          // Bytes a resumed download already has count as received.
          if (have?.length) received?.(have.reduce((sum, [start, end]) => sum + end - start, 0));
          return download.deliver(size, ctx, sink, received, wantsMore, have);
        };
        return {
          meta,
          carried,
          size,
          check,
          ...(md5 ? { md5 } : {}),
          ...(resume ? { resume } : {}),
          deliver,
          discard: download.discard,
        };
      }),

    listIncompleteUploads: (bucket, prefix, limit, sizeLimit, signal) =>
      operation({ bucket }, signal, async ({ client, sdk }, send) => {
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
        for (const u of uploads.slice(0, sizeLimit)) {
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
          u.bytes = bytes;
        }
        return { uploads, more };
      }),

    uploadObject: async (req, signal) => {
      const ctx = {
        bucket: req.bucket,
        key: req.key,
        hints: {
          InvalidArgument: req.storageClass
            ? "the store may not offer this storage_class; call again without storage_class, or with STANDARD."
            : undefined,
          AccessDenied: writeDeniedHint(req.encryption ?? config.encryption),
        },
      };
      try {
        const s3 = await getClient();
        // A streamed PUT has no bound on its whole time, only on a stall (the request timeout).
        if (req.streamed === "whole" && req.wholeMd5)
          return await putStreamed(s3, req, req.wholeMd5, signal, config.requestTimeoutMs);
        // The same bound as the fetch client's for an answer (client.ts).
        return await uploadObject(s3, req, signal, Math.max(config.requestTimeoutMs, config.connectTimeoutMs), resume);
      } catch (err) {
        throw toStorageError(err, ctx);
      }
    },

    streamingFor: async (req, wholeMd5, signal) => {
      const s3 = await getClient();
      if (req.size <= partSizeFor(req.size) || !(await streamable(s3, req))) return undefined;
      if (!(await isNear(s3, req.bucket, signal))) return "parts";
      return wholeMd5 !== undefined && req.size <= STREAM_PUT_MAX ? "whole" : "parts";
    },

    copyFrom: (source, req, signal, nameSource) => {
      // How far the destination is decides how the bytes go out (streamingFor, uploadObject): probed beside the
      // source's first requests instead of after them (five round trips to a far store; nearness.ts keeps the answer).
      getClient()
        .then((s3) => isNear(s3, req.bucket, signal))
        .catch(() => {});
      return copyAcrossStores(source, storage, req, signal, nameSource);
    },
    hasKeptUpload: (req) => hasKeptUpload(req, resume, partSizeFor(req.size)),
  };
  return storage;
}

/** What an answer says of its object's encryption, as an ETag's meaning depends on it. */
const encryptionOf = (out: {
  ServerSideEncryption?: string | undefined;
  SSECustomerAlgorithm?: string | undefined;
}) => ({
  ...(out.ServerSideEncryption ? { sse: out.ServerSideEncryption } : {}),
  ...(out.SSECustomerAlgorithm ? { customerKey: out.SSECustomerAlgorithm } : {}),
});
