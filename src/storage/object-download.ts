/**
 * Opens an object's download: the first answer read, then the rest in ranges
 * (transfer/ranged.ts) or one stream; the whole object's promises (checksums,
 * else its ETag's MD5) checked over every byte in order; progress as bytes
 * arrive; and, for a ranged download, what a cut one needs to be resumed. A
 * listed small object comes whole in one quick GET (quick-requests.ts) and is
 * handed on from memory: none of a ranged download's timers, pacing or
 * streams, which were most of a bulk job's per-object work.
 */
import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";
import { releaseChunks } from "../runtime/memory.ts";
import type { ErrorContext } from "./errors.ts";
import type { S3Handle } from "./requests/client.ts";
import { errorContext, objectParams, type SendOptions } from "./requests/operation.ts";
import { quickGet, quickGetFits, type WholeAnswer } from "./requests/quick-requests.ts";
import { metaOf } from "./transfer/bodies.ts";
import { etagMd5, orderedCheck, promisesOf } from "./transfer/integrity.ts";
import { isNear } from "./transfer/nearness.ts";
import { openDownload } from "./transfer/ranged.ts";
import { composedEtagOf } from "./transfer/same-parts.ts";
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
  const ctx = errorContext(addr);
  // Progress counts bytes as they arrive, over all ranges.
  let arrived = 0;
  const received = onProgress && ((bytes: number) => onProgress((arrived += bytes)));

  // Anything but the listed object, whole (an error, a changed object): the SDK's GET below answers it.
  const inMemory = quickGetFits(addr.key, listed, addr.versionId)
    ? await quickGet(s3, addr.bucket, addr.key, listed, signal, send.requestTimeout)
    : undefined;
  if (inMemory) return inMemoryDownload(inMemory, ctx, received);

  const download = await openDownload(s3, objectParams(addr), {
    signal,
    requestTimeout: send.requestTimeout,
    idleTimeout: at.idleTimeout,
    ...(paced ? { paced } : {}),
    answersFast: () => isNear(s3, addr.bucket, signal),
  });
  const { first, whole } = download;
  const { meta, carried, check, md5 } = aboutObject(first, whole, ctx);
  const composedEtag = composedEtagOf(first.ETag, s3.quirks, {
    ...(first.ServerSideEncryption ? { sse: first.ServerSideEncryption } : {}),
    ...(first.SSECustomerAlgorithm ? { customerKey: first.SSECustomerAlgorithm } : {}),
  });
  const size = whole ? first.ContentLength : meta.size >= 0 ? meta.size : undefined;
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
    ...(composedEtag ? { composedEtag } : {}),
    ...(resume ? { resume } : {}),
    deliver,
    discard: download.discard,
  };
}

/** What the first answer says of the object, and the check its promises make (its checksums, else its ETag's MD5; none, no check). */
function aboutObject(first: GetObjectCommandOutput, whole: boolean, ctx: ErrorContext) {
  const { checksums } = promisesOf(first, whole);
  const md5 =
    checksums.length > 0
      ? undefined
      : etagMd5(first.ETag, { sse: first.ServerSideEncryption, customerKey: first.SSECustomerAlgorithm });
  return {
    meta: metaOf(first),
    carried: { cache_control: first.CacheControl ?? null, metadata: first.Metadata ?? {} },
    check: orderedCheck({ checksums, md5 }, ctx),
    md5,
  };
}

/** A download of an object already read whole: its bytes handed on in one piece, or taken as they are (`bytes`). */
function inMemoryDownload(whole: WholeAnswer, ctx: ErrorContext, received?: (bytes: number) => void): ObjectDownload {
  const { meta, carried, check, md5 } = aboutObject(whole.output, true, ctx);
  const { bytes } = whole;
  return {
    meta,
    carried,
    size: bytes.byteLength,
    check,
    ...(md5 ? { md5 } : {}),
    bytes,
    deliver: async (sink: PieceSink) => {
      if (bytes.byteLength === 0) return;
      received?.(bytes.byteLength);
      // Written, the bytes are garbage (unless the sink kept them): freed now rather than at the next collection.
      if ((await sink(0, [bytes])) !== "kept") releaseChunks([bytes]);
    },
    discard: () => {},
  };
}
