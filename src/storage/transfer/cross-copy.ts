/**
 * A copy from one store to another, streamed through this server: the
 * source downloaded as get_object download does it (ranges one after another
 * near, several at once far, every request pinned to the first answer's
 * ETag, its MD5 or checksums checked over all of it), the two joined by a
 * PiecePipe (bounded memory; nothing reaches the destination that did not
 * verify). The destination takes the source's chunks as they are where
 * they can be streamed (streamed-put.ts: one PUT checked against the
 * source's MD5, to a near store; streamed-parts.ts: parts checked by their
 * ETags), else parts read into buffers, as upload_file sends them. The
 * multipart upload is aborted on any failure; a cut (a cancelled call, the server stopping) keeps it, and the
 * next copy of the same source (same ETag and size) to the same destination
 * reads from the source only the parts the destination lacks, each a ranged
 * read pinned to that ETag (upload-resume.ts). Length is always checked.
 */
import { createHash } from "node:crypto";
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import type { CopyRequest, CopyResult, Storage, UploadRequest } from "../types.ts";
import { partSizeFor } from "./part-sizes.ts";
import { PiecePipe } from "./piece-pipe.ts";

/** Bytes held between the download and the upload beyond the parts being sent: more raises the peak, not the speed (BENCH_ONLY=stores). */
const PIPE_BYTES = 8 * 1024 * 1024;

/**
 * A far source gets one more range in flight when, since the last range ended, the upload waited this share of the
 * time for the source's next bytes.
 */
const SOURCE_BOUND = 1 / 3;

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a known exception (docs/architecture.md), to be split into named steps
export async function copyAcrossStores(
  source: Storage,
  target: Storage,
  req: CopyRequest,
  signal?: AbortSignal,
  nameTheSource: (err: unknown) => unknown = (err) => err,
): Promise<CopyResult> {
  // An error named as the source's once may reach here again (through the pipe, from either side): named once only.
  const named = new WeakSet<object>();
  const nameSource = (err: unknown) => {
    if (typeof err === "object" && err !== null && named.has(err)) return err;
    const renamed = nameTheSource(err);
    if (typeof renamed === "object" && renamed !== null) named.add(renamed);
    return renamed;
  };
  // The source side's errors say so (the destination's are the call's own).
  const fromSource = <T>(work: Promise<T>) => work.catch((err: unknown) => Promise.reject(nameSource(err)));
  // A listed object (copy_prefix) needs no HEAD: the download's first answer must match the listing instead.
  const listed = req.listed?.etag ? req.listed : undefined;
  const head = listed ? undefined : await fromSource(source.headObject(req.source, signal));
  const unknownSize = () =>
    nameSource(
      new ActionableError({
        resource: s3Uri(req.source.bucket, req.source.key),
        code: "UnknownSize",
        message:
          "The source store did not say how large the object is, so a copy to another store could not be checked for length.",
        hint: "download it with get_object mode download and upload it with upload_file.",
      }),
    );
  if (head && head.size === null) throw unknownSize();
  if (req.ifAbsent) await refuseIfThere(target, req.bucket, req.key, signal);
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const download = await fromSource(
    source.openObjectDownload(req.source, stop.signal, { paced: true, ...(listed ? { listed } : {}) }),
  ).catch((err: unknown) => {
    signal?.removeEventListener("abort", onAbort);
    throw err;
  });
  try {
    const expected = head ?? listed!;
    if (download.size === undefined) throw unknownSize();
    if (download.meta.etag !== expected.etag || download.size !== expected.size) {
      throw nameSource(
        new ActionableError({
          resource: s3Uri(req.source.bucket, req.source.key),
          code: "ObjectChanged",
          message: "The source object was replaced while the copy started.",
          hint: "copy it again.",
        }),
      );
    }
    const size = download.size;
    const about = {
      content_type: download.meta.content_type,
      ...download.carried,
      version_id: download.meta.version_id,
    };
    // What a cut copy is known again by: the source store, object, version and ETag (every read is pinned to it).
    const sourceId = {
      id: `${req.sourceStore ?? "source"}:${s3Uri(req.source.bucket, req.source.key)}${about.version_id ? `?versionId=${about.version_id}` : ""}`,
      version: download.meta.etag ?? "",
      trusted: true,
    };
    const copyMeta = req.metadataDirective === "COPY";
    const upload: UploadRequest = {
      bucket: req.bucket,
      key: req.key,
      size,
      readAt: (into, position) => pipe.readAt(into, position),
      takeAt: (position, max) => pipe.takeAt(position, max),
      rereadAt: (into, position, md5) =>
        readAgain(source, req, download.meta, into, position, md5, stop.signal).catch((err: unknown) =>
          Promise.reject(nameSource(err)),
        ),
      contentType: (copyMeta ? about.content_type : req.contentType) ?? "application/octet-stream",
      ...((copyMeta ? about.cache_control : req.cacheControl)
        ? { cacheControl: (copyMeta ? about.cache_control : req.cacheControl)! }
        : {}),
      ...(copyMeta ? { metadata: about.metadata } : req.metadata ? { metadata: req.metadata } : {}),
      ...(req.storageClass ? { storageClass: req.storageClass } : {}),
      ...(req.encryption ? { encryption: req.encryption } : {}),
      ...(download.meta.etag ? { source: sourceId } : {}),
      onProgress: (done) => req.onProgress?.(done, size),
    };
    if (target.hasKeptUpload(upload)) {
      // A copy cut before: the destination keeps its parts; only the missing ones are read from the source, by range.
      download.discard();
      req.onProgress?.(0, size);
      const version = about.version_id ? { versionId: about.version_id } : {};
      const readAt = async (into: Uint8Array, position: number) => {
        const { meta, bytes } = await source
          .readObjectHead({ ...req.source, ...version }, into.length, stop.signal, position)
          .catch((err: unknown) => Promise.reject(nameSource(err)));
        if (meta.etag !== download.meta.etag)
          throw nameSource(
            new ActionableError({
              resource: s3Uri(req.source.bucket, req.source.key),
              code: "ObjectChanged",
              message: "The source object was replaced while the copy ran; nothing was stored.",
              hint: "copy it again.",
            }),
          );
        into.set(bytes.subarray(0, into.length));
        return Math.min(bytes.length, into.length);
      };
      // The same upload, its bytes read by range: not from the pipe (takeAt, rereadAt are the pipe's).
      const { takeAt: _pipe, rereadAt: _again, ...byRange } = upload;
      const sent = await target.uploadObject({ ...byRange, readAt, source: sourceId }, stop.signal);
      return { ...sent, size, multipart: size > partSizeFor(size), source_version_id: about.version_id };
    }
    // A single-part source to a near store: one PUT whose Content-MD5 is the source's ETag, checked by the
    // destination (streamed-put.ts), so the source's own check here would only repeat it.
    // A multipart source (no MD5 to promise) to a near store: parts streamed from the pipe, each checked by its ETag.
    const streamed = await target.streamingFor(upload, download.md5, stop.signal);
    const wholeMd5 = streamed === "whole" ? download.md5 : undefined;
    // The source's check failing is the source's error, whichever side of the pipe hears of it first.
    const check = download.check;
    const sourceCheck = check && {
      update: (bytes: Uint8Array) => check.update(bytes),
      finish: () => {
        try {
          check.finish();
        } catch (err) {
          throw nameSource(err);
        }
      },
    };
    const pipe = new PiecePipe(size, PIPE_BYTES, wholeMd5 ? undefined : sourceCheck);
    req.onProgress?.(0, size);
    // Whichever side fails first stops the other; its error is the one reported.
    let first: "source" | "target" | undefined;
    const delivering = download
      .deliver(
        (offset, chunks) => pipe.write(offset, chunks),
        () => pipe.starvedShare() > SOURCE_BOUND,
      )
      .catch((err: unknown) => {
        first ??= "source";
        pipe.fail(err);
        throw err;
      });
    delivering.catch(() => {}); // settled below
    const uploading = target
      .uploadObject({ ...upload, ...(streamed ? { streamed } : {}), ...(wholeMd5 ? { wholeMd5 } : {}) }, stop.signal)
      .catch((err: unknown) => {
        // The upload gave up (and aborted its multipart upload): stop reading the source.
        first ??= "target";
        stop.abort(err);
        pipe.fail(err);
        throw err;
      });
    const [sent, read] = await Promise.allSettled([uploading, delivering]);
    if (first === "source" && read.status === "rejected") throw nameSource(read.reason);
    if (sent.status === "rejected") throw wholeMd5 ? notTheSource(sent.reason, req, wholeMd5, nameSource) : sent.reason;
    if (read.status === "rejected") throw nameSource(read.reason);
    return {
      ...sent.value,
      size,
      multipart: !wholeMd5 && size > partSizeFor(size),
      source_version_id: about.version_id,
    };
  } finally {
    signal?.removeEventListener("abort", onAbort);
    download.discard();
  }
}

/** The destination refused the streamed bytes for their MD5: they are not the bytes the source's ETag promises. */
function notTheSource(err: unknown, req: CopyRequest, md5: string, nameSource: (err: unknown) => unknown): unknown {
  if (!(err instanceof ActionableError) || err.code !== "BadDigest") return err;
  return nameSource(
    new ActionableError({
      resource: s3Uri(req.source.bucket, req.source.key),
      code: "IntegrityCheckFailed",
      message: `The bytes read from the source do not have the MD5 its ETag promises (${md5}): the destination checked them and stored nothing.`,
      hint: "retry the copy; if it repeats, the source store or a proxy is corrupting data.",
      retryable: true,
    }),
  );
}

/** The source's bytes at `position` once more (a streamed part sent again), pinned to the copy's version and ETag and to the MD5 of the bytes first read. */
async function readAgain(
  source: Storage,
  req: CopyRequest,
  first: { etag: string | null; version_id: string | null },
  into: Uint8Array,
  position: number,
  md5: Buffer,
  signal: AbortSignal,
): Promise<void> {
  if (into.length === 0) return;
  const { meta, bytes } = await source.readObjectHead(
    { ...req.source, ...(first.version_id ? { versionId: first.version_id } : {}) },
    into.length,
    signal,
    position,
  );
  const resource = s3Uri(req.source.bucket, req.source.key);
  if (meta.etag !== first.etag)
    throw new ActionableError({
      resource,
      code: "ObjectChanged",
      message: "The source object was replaced while the copy ran; nothing was stored.",
      hint: "copy it again.",
    });
  if (bytes.length !== into.length || !createHash("md5").update(bytes).digest().equals(md5)) {
    throw new ActionableError({
      resource,
      code: "IntegrityCheckFailed",
      message: `Bytes ${position}-${position + into.length - 1} read from the source again (to send a part once more) are not the ones first read; nothing was stored.`,
      hint: "retry the copy; if it repeats, the source store or a proxy is corrupting data.",
      retryable: true,
    });
  }
  into.set(bytes);
}

async function refuseIfThere(target: Storage, bucket: string, key: string, signal?: AbortSignal): Promise<void> {
  const exists = await target.headObject({ bucket, key }, signal).then(
    () => true,
    (err: unknown) => {
      if (err instanceof ActionableError && (err.code === "NoSuchKey" || err.code === "NotFound" || err.status === 404))
        return false;
      throw err;
    },
  );
  if (exists) {
    throw new ActionableError({
      resource: s3Uri(bucket, key),
      code: "PreconditionFailed",
      message: "An object already exists at the destination and if_absent was given; nothing was copied.",
      hint: "choose another object_key, or call again without if_absent to replace it.",
    });
  }
}
