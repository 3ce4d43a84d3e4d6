/**
 * Server-side copy: no byte passes through this process. One CopyObject up to
 * the threshold (S3 allows 5 GiB), a multipart copy (UploadPartCopy ranges)
 * above it. The source is pinned to the ETag seen first, so a source replaced
 * mid-copy fails the copy instead of mixing two objects; a failed multipart
 * copy is aborted before the error is returned. Every request goes through
 * `request`, which gives each its own operation deadline: a copy is work on
 * the store, so no single request may hang however slowly the store answers.
 */
import type { CompletedPart } from "@aws-sdk/client-s3";
import { headOf, refuseIfPresent, writeParams } from "./object-params.ts";
import type { S3Handle } from "./requests/client.ts";
import type { SendOptions } from "./requests/operation.ts";
import { quickCopy, quickCopyFits } from "./requests/quick-requests.ts";
import { partSizeFor } from "./transfer/part-sizes.ts";
import type { CopyRequest, CopyResult, ObjectAddress, ObjectHead } from "./types.ts";

const MiB = 1024 * 1024;
/** Parts copied at once: each is work on the store, not here. */
const PARTS_IN_FLIGHT = 4;

/** `bucket/key?versionId=v`, with the key's segments URL-encoded, as CopySource wants it. */
export function copySource(addr: ObjectAddress): string {
  const key = addr.key.split("/").map(encodeURIComponent).join("/");
  return `${addr.bucket}/${key}${addr.versionId ? `?versionId=${encodeURIComponent(addr.versionId)}` : ""}`;
}

/**
 * Part size for a multipart copy: at least S3's rule (5 MiB, 10,000 parts) and
 * large enough to need few requests (512 MiB), but below the threshold so a
 * test-sized threshold still makes several parts.
 */
export function copyPartSize(size: number, threshold: number): number {
  const preferred = Math.max(5 * MiB, Math.min(512 * MiB, Math.floor(threshold / 2 / MiB) * MiB));
  return Math.max(partSizeFor(size), preferred);
}

/** What the destination gets: the source's headers (COPY) or the ones given (REPLACE). */
function destinationHeaders(req: CopyRequest, source: ObjectHead) {
  if (req.metadataDirective === "REPLACE") return writeParams(req);
  return writeParams({
    contentType: source.content_type ?? undefined,
    cacheControl: source.cache_control ?? undefined,
    metadata: source.metadata,
    storageClass: req.storageClass,
    ifAbsent: req.ifAbsent,
    encryption: req.encryption,
  });
}

/** Runs one store request under its own deadline (and the caller's signal, unless `uncancellable`: clean-up must go out). */
export type CopyRequestRunner = <T>(
  fn: (s3: S3Handle, send: SendOptions) => Promise<T>,
  uncancellable?: boolean,
) => Promise<T>;

/** A copy on the store, in phases: the source pinned, then one request or the multipart copy. */
export async function copyObject(req: CopyRequest, threshold: number, request: CopyRequestRunner): Promise<CopyResult> {
  return new ServerSideCopy(req, threshold, request).run();
}

/** The source as the copy reads it: its head, the ETag every request is pinned to, and the CopySource naming it. */
interface PinnedSource {
  head: ObjectHead;
  size: number;
  pin: { CopySourceIfMatch?: string };
  from: string;
  /** What a listing already told (a one-request copy of it needs no HEAD). */
  listed?: CopyRequest["listed"];
}

class ServerSideCopy {
  constructor(
    readonly req: CopyRequest,
    readonly threshold: number,
    readonly request: CopyRequestRunner,
  ) {}

  async run(): Promise<CopyResult> {
    const { req, request } = this;
    const source = await this.#pinSource();
    const oneRequest = source.size <= this.threshold;
    if (req.ifAbsent)
      await request((s3, send) => refuseIfPresent(s3, { bucket: req.bucket, key: req.key, oneRequest }, send));
    req.onProgress?.(0, source.size);
    return oneRequest ? this.#whole(source) : this.#multipart(source);
  }

  /** The source's head (from the listing, or a HEAD), pinned to its ETag and, where the store has one, its version. */
  async #pinSource(): Promise<PinnedSource> {
    const { req } = this;
    // A listing already told size and ETag: a one-request copy needs no HEAD (the store copies the headers itself).
    const listed =
      req.listed && req.listed.size <= this.threshold && req.metadataDirective === "COPY" ? req.listed : undefined;
    const head = listed
      ? { ...headOf({ $metadata: {} }), size: listed.size, etag: listed.etag }
      : headOf(
          await this.request(({ client, sdk }, send) =>
            client.send(
              new sdk.HeadObjectCommand({
                Bucket: req.source.bucket,
                Key: req.source.key,
                ...(req.source.versionId ? { VersionId: req.source.versionId } : {}),
              }),
              send,
            ),
          ),
        );
    // Pin the version too where the store has one, so every part reads the same object.
    const from = copySource({
      ...req.source,
      ...(head.version_id && head.version_id !== "null" ? { versionId: head.version_id } : {}),
    });
    return {
      head,
      size: head.size ?? 0,
      pin: head.etag ? { CopySourceIfMatch: head.etag } : {},
      from,
      ...(listed ? { listed } : {}),
    };
  }

  /** One request: a quick one for a small listed object copied with its headers (quick-requests.ts), else the SDK's. */
  async #whole(source: PinnedSource): Promise<CopyResult> {
    const { req } = this;
    const { from, pin, size } = source;
    const listed = source.listed;
    const quick = quickCopyFits(
      req.source,
      req.key,
      listed,
      req.metadataDirective === "COPY" && !req.storageClass && !req.encryption,
      !!req.ifAbsent,
    )
      ? await this.request((s3, send) =>
          quickCopy(
            s3,
            { copySource: from, etag: listed.etag, bucket: req.bucket, key: req.key },
            send.abortSignal,
            send.requestTimeout,
          ),
        )
      : undefined;
    const out =
      quick ??
      (await this.request(({ client, sdk }, send) =>
        client.send(
          new sdk.CopyObjectCommand({
            Bucket: req.bucket,
            Key: req.key,
            CopySource: from,
            ...pin,
            MetadataDirective: req.metadataDirective,
            ...(req.metadataDirective === "REPLACE"
              ? writeParams(req)
              : writeParams({ storageClass: req.storageClass, ifAbsent: req.ifAbsent, encryption: req.encryption })),
          }),
          send,
        ),
      ));
    req.onProgress?.(size, size);
    return {
      etag: out.CopyObjectResult?.ETag ?? null,
      version_id: out.VersionId ?? null,
      size,
      multipart: false,
      source_version_id: out.CopySourceVersionId ?? source.head.version_id,
    };
  }

  /** UploadPartCopy ranges, a few at once; any failure aborts the upload before the error is returned. */
  async #multipart(source: PinnedSource): Promise<CopyResult> {
    const { req } = this;
    const headers = destinationHeaders(req, source.head);
    const { IfNoneMatch, ...createHeaders } = headers as typeof headers & { IfNoneMatch?: string };
    // Not cancellable either: a create the store has received may still start an upload after the client hangs up
    // (transfer/multipart-upload.ts). Waited for, its upload is aborted below like any other.
    const created = await this.request(
      ({ client, sdk }, send) =>
        client.send(new sdk.CreateMultipartUploadCommand({ Bucket: req.bucket, Key: req.key, ...createHeaders }), send),
      true,
    );
    const uploadId = created.UploadId!;
    try {
      const parts = await this.#copyParts(source, uploadId);
      const done = await this.request(({ client, sdk }, send) =>
        client.send(
          new sdk.CompleteMultipartUploadCommand({
            Bucket: req.bucket,
            Key: req.key,
            UploadId: uploadId,
            MultipartUpload: { Parts: parts },
            ...(IfNoneMatch ? { IfNoneMatch } : {}),
          }),
          send,
        ),
      );
      return {
        etag: done.ETag || null,
        version_id: done.VersionId ?? null,
        size: source.size,
        multipart: true,
        source_version_id: source.head.version_id,
      };
    } catch (err) {
      // Not cancellable: the clean-up must go out even when the call was cancelled (it still has a deadline).
      await this.request(
        ({ client, sdk }, send) =>
          client.send(
            new sdk.AbortMultipartUploadCommand({ Bucket: req.bucket, Key: req.key, UploadId: uploadId }),
            send,
          ),
        true,
      ).catch(() => {});
      throw err;
    }
  }

  async #copyParts(source: PinnedSource, uploadId: string): Promise<CompletedPart[]> {
    const { req } = this;
    const { size, from, pin } = source;
    const partSize = copyPartSize(size, this.threshold);
    const count = Math.ceil(size / partSize);
    const parts: CompletedPart[] = new Array(count);
    let next = 0;
    let copied = 0;
    const worker = async () => {
      while (next < count) {
        const index = next++;
        const start = index * partSize;
        const end = Math.min(size, start + partSize) - 1;
        const out = await this.request(({ client, sdk }, send) =>
          client.send(
            new sdk.UploadPartCopyCommand({
              Bucket: req.bucket,
              Key: req.key,
              UploadId: uploadId,
              PartNumber: index + 1,
              CopySource: from,
              CopySourceRange: `bytes=${start}-${end}`,
              ...pin,
            }),
            send,
          ),
        );
        parts[index] = { PartNumber: index + 1, ETag: out.CopyPartResult?.ETag };
        copied += end - start + 1;
        req.onProgress?.(copied, size);
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARTS_IN_FLIGHT, count) }, worker));
    return parts;
  }
}
