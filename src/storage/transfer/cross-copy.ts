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
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import { releaseChunks } from "../../runtime/memory.ts";
import type { CopyRequest, CopyResult, Storage, UploadRequest } from "../types.ts";
import { notTheSource, readAgain, refuseIfThere } from "./cross-copy-checks.ts";
import { fitsOnePart } from "./part-sizes.ts";
import { PiecePipe } from "./piece-pipe.ts";
import { PartsUnlikeSource, sourceParts } from "./same-parts.ts";

/** Bytes held between the download and the upload beyond the parts being sent: more raises the peak, not the speed (BENCH_ONLY=stores). */
const PIPE_BYTES = 8 * 1024 * 1024;

/**
 * A far source gets one more range in flight when, since the last range ended, the upload waited this share of the
 * time for the source's next bytes.
 */
const SOURCE_BOUND = 1 / 3;

export async function copyAcrossStores(
  source: Storage,
  target: Storage,
  req: CopyRequest,
  signal?: AbortSignal,
  nameTheSource: (err: unknown) => unknown = (err) => err,
): Promise<CopyResult> {
  try {
    return await new CrossStoreCopy(source, target, req, signal, nameTheSource, true).run();
  } catch (err) {
    // The source's parts, kept, did not compose its ETag (same-parts.ts): nothing was stored. Made again, checked.
    if (!(err instanceof PartsUnlikeSource) || signal?.aborted) throw err;
    return await new CrossStoreCopy(source, target, req, signal, nameTheSource, false).run();
  }
}

type Download = Awaited<ReturnType<Storage["openObjectDownload"]>>;

/** A copy between stores, in phases: the source opened and held to what was listed or seen, then resumed by range or streamed. */
class CrossStoreCopy {
  /** Errors already named as the source's (one may come back through the pipe, from either side): named once only. */
  readonly #named = new WeakSet<object>();
  /** Stops the source's reads: the caller's cancel, or the upload giving up. */
  readonly #stop = new AbortController();

  constructor(
    readonly source: Storage,
    readonly target: Storage,
    readonly req: CopyRequest,
    readonly signal: AbortSignal | undefined,
    readonly nameTheSource: (err: unknown) => unknown,
    /** Whether a multipart source's parts may be kept and held to its ETag (same-parts.ts), else checked part by part. */
    readonly keepParts: boolean,
  ) {}

  async run(): Promise<CopyResult> {
    const { req, signal } = this;
    // A listed object (copy_prefix) needs no HEAD: the download's first answer must match the listing instead.
    const listed = req.listed?.etag ? req.listed : undefined;
    const head = listed ? undefined : await this.#fromSource(this.source.headObject(req.source, signal));
    if (head && head.size === null) throw this.#unknownSize();
    if (req.ifAbsent) await refuseIfThere(this.target, req.bucket, req.key, signal);
    const onAbort = () => this.#stop.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const download = await this.#fromSource(
        this.source.openObjectDownload(req.source, this.#stop.signal, { paced: true, ...(listed ? { listed } : {}) }),
      );
      try {
        const expected = head ?? listed!;
        if (download.size === undefined) throw this.#unknownSize();
        if (download.meta.etag !== expected.etag || download.size !== expected.size)
          throw this.#changed("The source object was replaced while the copy started.");
        const upload = this.#uploadRequest(download, download.size);
        if (download.bytes && fitsOnePart(download.size))
          return await this.#putInMemory(download, download.bytes, upload);
        // A copy cut before: the destination keeps its parts; only the missing ones are read from the source, by range.
        if (this.target.hasKeptUpload(upload)) return await this.#resumeByRange(download, upload);
        return await this.#stream(download, upload);
      } finally {
        download.discard();
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** The destination's upload of the source's bytes, read from the pipe (`#pipe`, made when streaming starts). */
  #uploadRequest(download: Download, size: number): UploadRequest & { versionId: string | null } {
    const { req } = this;
    const about = { content_type: download.meta.content_type, ...download.carried };
    const versionId = download.meta.version_id;
    // What a cut copy is known again by: the source store, object, version and ETag (every read is pinned to it).
    const sourceId = {
      id: `${req.sourceStore ?? "source"}:${s3Uri(req.source.bucket, req.source.key)}${versionId ? `?versionId=${versionId}` : ""}`,
      version: download.meta.etag ?? "",
      trusted: true,
    };
    const sameParts = this.keepParts && download.composedEtag ? sourceParts(download.composedEtag, size) : undefined;
    const copyMeta = req.metadataDirective === "COPY";
    const cacheControl = copyMeta ? about.cache_control : req.cacheControl;
    return {
      bucket: req.bucket,
      key: req.key,
      size,
      versionId,
      readAt: (into, position) => this.#pipe!.readAt(into, position),
      takeAt: (position, max) => this.#pipe!.takeAt(position, max),
      rereadAt: (into, position, sameAsFirst) =>
        readAgain(this.source, req, download.meta, into, position, sameAsFirst, this.#stop.signal).catch(
          (err: unknown) => Promise.reject(this.#nameSource(err)),
        ),
      contentType: (copyMeta ? about.content_type : req.contentType) ?? "application/octet-stream",
      ...(cacheControl ? { cacheControl } : {}),
      ...(copyMeta ? { metadata: about.metadata } : req.metadata ? { metadata: req.metadata } : {}),
      ...(req.storageClass ? { storageClass: req.storageClass } : {}),
      ...(req.encryption ? { encryption: req.encryption } : {}),
      ...(download.meta.etag ? { source: sourceId } : {}),
      ...(sameParts ? { sameParts } : {}),
      onProgress: (done) => req.onProgress?.(done, size),
    };
  }

  #pipe: PiecePipe | undefined;

  /** The same upload, the parts the destination lacks read from the source by range (not from the pipe). */
  async #resumeByRange(download: Download, upload: UploadRequest & { versionId: string | null }): Promise<CopyResult> {
    const { req } = this;
    download.discard();
    req.onProgress?.(0, upload.size);
    const version = upload.versionId ? { versionId: upload.versionId } : {};
    const readAt = async (into: Uint8Array, position: number) => {
      const { meta, bytes } = await this.source
        .readObjectHead({ ...req.source, ...version }, into.length, this.#stop.signal, position)
        .catch((err: unknown) => Promise.reject(this.#nameSource(err)));
      if (meta.etag !== download.meta.etag)
        throw this.#changed("The source object was replaced while the copy ran; nothing was stored.");
      into.set(bytes.subarray(0, into.length));
      return Math.min(bytes.length, into.length);
    };
    const { takeAt: _pipe, rereadAt: _again, versionId, ...byRange } = upload;
    const sent = await this.target.uploadObject({ ...byRange, readAt }, this.#stop.signal);
    const size = upload.size;
    return { ...sent, size, multipart: !fitsOnePart(size), source_version_id: versionId };
  }

  /**
   * The source's chunks through the pipe to the destination. A single-part source to a near store, or one that fits
   * a single PUT to any: one PUT whose Content-MD5 is the source's ETag, checked by the destination (streamed-put.ts,
   * single-put.ts), so the source's own check here would only repeat it (a bulk copy of small objects hashed each
   * twice). A multipart source (no MD5 to promise) to a near store: parts streamed from the pipe, each
   * checked by its ETag. Whichever side fails first stops the other; its error is the one reported.
   */
  async #stream(download: Download, upload: UploadRequest & { versionId: string | null }): Promise<CopyResult> {
    const { req } = this;
    const { versionId, ...request } = upload;
    const size = upload.size;
    const streamed = await this.target.streamingFor(request, download.md5, this.#stop.signal);
    // One PUT (streamed, or of a source that fits one part) of a source that promises its MD5: the PUT's Content-MD5
    // is that MD5, checked by the destination, so the source's own check here would only repeat it.
    const onePut = streamed === "whole" || (streamed === undefined && fitsOnePart(size));
    const wholeMd5 = onePut ? download.md5 : undefined;
    this.#pipe = new PiecePipe(size, PIPE_BYTES, wholeMd5 ? undefined : this.#sourceCheck(download));
    const pipe = this.#pipe;
    req.onProgress?.(0, size);
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
    const uploading = this.target
      .uploadObject(
        { ...request, ...(streamed ? { streamed } : {}), ...(wholeMd5 ? { wholeMd5 } : {}) },
        this.#stop.signal,
      )
      .catch((err: unknown) => {
        // The upload gave up (and aborted its multipart upload): stop reading the source.
        first ??= "target";
        this.#stop.abort(err);
        pipe.fail(err);
        throw err;
      });
    const [sent, read] = await Promise.allSettled([uploading, delivering]);
    if (first === "source" && read.status === "rejected") throw this.#nameSource(read.reason);
    if (sent.status === "rejected")
      throw wholeMd5 ? notTheSource(sent.reason, req, wholeMd5, this.#nameSource) : sent.reason;
    if (read.status === "rejected") throw this.#nameSource(read.reason);
    return { ...sent.value, size, multipart: !onePut, source_version_id: versionId };
  }

  /**
   * A source read whole into memory (a listed small object): one PUT of those bytes, no pipe. Its Content-MD5 is the
   * source's MD5 where the ETag promises one, checked by the destination as in `#stream`; else the source's own check
   * (its checksums) is made here first.
   */
  async #putInMemory(
    download: Download,
    bytes: Uint8Array,
    upload: UploadRequest & { versionId: string | null },
  ): Promise<CopyResult> {
    const { req } = this;
    const { versionId, takeAt: _pipe, rereadAt: _again, ...request } = upload;
    const wholeMd5 = download.md5;
    if (!wholeMd5 && download.check) {
      try {
        download.check.update(bytes);
        download.check.finish();
      } catch (err) {
        throw this.#nameSource(err);
      }
    }
    const readAt = async (into: Uint8Array, position: number) => {
      const part = bytes.subarray(position, position + into.length);
      into.set(part);
      return part.length;
    };
    req.onProgress?.(0, bytes.length);
    const size = bytes.length;
    const sent = await this.target
      .uploadObject({ ...request, readAt, bytes, ...(wholeMd5 ? { wholeMd5 } : {}) }, this.#stop.signal)
      .catch((err: unknown) => Promise.reject(wholeMd5 ? notTheSource(err, req, wholeMd5, this.#nameSource) : err))
      // Sent (or not), the bytes are garbage: freed now, not at a collection the job's pacer would force for them.
      .finally(() => releaseChunks([bytes]));
    return { ...sent, size, multipart: false, source_version_id: versionId };
  }

  /** The source's own check, its failure the source's error whichever side of the pipe hears of it first. */
  #sourceCheck(download: Download) {
    const check = download.check;
    return (
      check && {
        update: (bytes: Uint8Array) => check.update(bytes),
        finish: () => {
          try {
            check.finish();
          } catch (err) {
            throw this.#nameSource(err);
          }
        },
      }
    );
  }

  #nameSource = (err: unknown): unknown => {
    if (typeof err === "object" && err !== null && this.#named.has(err)) return err;
    const renamed = this.nameTheSource(err);
    if (typeof renamed === "object" && renamed !== null) this.#named.add(renamed);
    return renamed;
  };

  /** The source side's errors say so (the destination's are the call's own). */
  #fromSource<T>(work: Promise<T>): Promise<T> {
    return work.catch((err: unknown) => Promise.reject(this.#nameSource(err)));
  }

  #unknownSize(): unknown {
    return this.#nameSource(
      new ActionableError({
        resource: s3Uri(this.req.source.bucket, this.req.source.key),
        code: "UnknownSize",
        message:
          "The source store did not say how large the object is, so a copy to another store could not be checked for length.",
        hint: "download it with get_object mode download and upload it with upload_file.",
      }),
    );
  }

  #changed(message: string): unknown {
    return this.#nameSource(
      new ActionableError({
        resource: s3Uri(this.req.source.bucket, this.req.source.key),
        code: "ObjectChanged",
        message,
        hint: "copy it again.",
      }),
    );
  }
}
