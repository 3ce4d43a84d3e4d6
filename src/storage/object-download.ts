/**
 * Opens an object's download: the first answer read, then the rest in ranges
 * (transfer/ranged.ts) or one stream; the whole object's promises (checksums,
 * else its ETag's MD5) checked over every byte in order; progress as bytes
 * arrive; and, for a ranged download, what a cut one needs to be resumed.
 */
import type { S3Handle } from "./requests/client.ts";
import { errorContext, objectParams, type SendOptions } from "./requests/operation.ts";
import { quickGet, quickGetFits } from "./requests/quick-requests.ts";
import { metaOf } from "./transfer/bodies.ts";
import { etagMd5, orderedCheck, promisesOf } from "./transfer/integrity.ts";
import { isNear } from "./transfer/nearness.ts";
import { openDownload } from "./transfer/ranged.ts";
import type { ObjectAddress, ObjectDownload, PieceSink, Storage } from "./types.ts";

type DownloadOptions = NonNullable<Parameters<Storage["openObjectDownload"]>[2]>;

export async function openObjectDownload(
  s3: S3Handle,
  send: SendOptions,
  at: {
    addr: ObjectAddress;
    signal: AbortSignal | undefined;
    options: DownloadOptions;
    /** The idle timeout of a body once it flows. */
    idleTimeout: number;
    /** The store's identity in the records of kept transfers. */
    keptStore: string;
  },
): Promise<ObjectDownload> {
  const { addr, signal, keptStore } = at;
  const { onProgress, listed, paced } = at.options;

  const quick = quickGetFits(addr.key, listed, addr.versionId)
    ? (stop: AbortSignal) => quickGet(s3, addr.bucket, addr.key, listed, stop, send.requestTimeout)
    : undefined;
  const download = await openDownload(s3, objectParams(addr), {
    signal,
    requestTimeout: send.requestTimeout,
    idleTimeout: at.idleTimeout,
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
  const md5 =
    checksums.length > 0
      ? undefined
      : etagMd5(first.ETag, { sse: first.ServerSideEncryption, customerKey: first.SSECustomerAlgorithm });
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
}
