/**
 * A small object's GET, PUT or copy without the SDK's middleware stack.
 *
 * A bulk download, a directory upload or a copy between stores of thousands
 * of small objects is bound by the request rate, and there the SDK's
 * per-request work (building the handler stack, endpoint rules, schema
 * serde) is most of our CPU, several times that of the same GET signed here
 * and sent with fetch; on cores shared with the store that CPU is the job's
 * speed (BENCH_ONLY=bulk, the 2,000 small objects).
 *
 * The request is the SDK's own in every part that matters (signer,
 * credentials, region, the bucket's URL, the key's encoding:
 * quick-transport.ts). It is tried only where nothing else is needed:
 * - GET: a listed single-part object (its ETag is its MD5, checked over the
 *   bytes by the caller as for any download) up to QUICK_MAX_BYTES, pinned
 *   to the listed ETag, no version, no dot segments;
 * - PUT: a body up to QUICK_MAX_BYTES with its Content-MD5 (the store checks
 *   it; the caller checks the returned ETag), header values in plain ASCII,
 *   no condition, and only where the SDK would add no checksum of its own
 *   (requestChecksumCalculation WHEN_REQUIRED: custom endpoints).
 * - CopyObject within one store: a listed single-part source up to
 *   QUICK_MAX_BYTES, its headers copied (COPY), pinned to the listed ETag,
 *   no version, no condition on the destination; success only when the
 *   answer's body is a CopyObjectResult (a copy can fail after its 200).
 * Anything but a 200 (of exactly the listed length, for a GET) — an error, a
 * redirect, a throttle, a changed object, a network failure — answers
 * undefined, and the caller sends the SDK's request, whose answer (retries,
 * errors) is the one reported: a PUT of the same bytes is idempotent. So this
 * path can make a transfer faster, never different.
 */

import type { CopyObjectCommandOutput, GetObjectCommandOutput, PutObjectCommandOutput } from "@aws-sdk/client-s3";
import type { WriteEncryption } from "../../config/encryption-config.ts";
import type { S3Handle } from "./client.ts";
import { encryptionHeaders } from "./encryption.ts";
import { bounded, EMPTY_SHA256, readExactly, readText, sendQuick } from "./quick-transport.ts";

/** Objects up to this size take a quick GET, PUT or copy. */
export const QUICK_MAX_BYTES = 1024 * 1024;
const PLAIN_MD5_ETAG = /^"?[0-9a-fA-F]{32}"?$/;
const DOT_SEGMENT = /(^|\/)\.\.?(\/|$)/;
/** Header values the SDK would send unchanged; anything else goes through the SDK. */
const PLAIN_VALUE = /^[\x20-\x7e]*$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export interface Listed {
  size: number;
  etag: string | null;
}

/** Whether a listed object may take the quick GET. */
export function quickGetFits(
  key: string,
  listed: Listed | undefined,
  versionId: string | undefined,
): listed is Listed & { etag: string } {
  return (
    listed !== undefined &&
    versionId === undefined &&
    listed.size <= QUICK_MAX_BYTES &&
    listed.etag !== null &&
    PLAIN_MD5_ETAG.test(listed.etag) &&
    !DOT_SEGMENT.test(key)
  );
}

/** A whole object read into memory: its answer in the SDK's shape (its Body those bytes again) and the bytes. */
export interface WholeAnswer {
  output: GetObjectCommandOutput;
  bytes: Uint8Array;
}

/** The object's whole body and its GET answer, or undefined: then send the SDK's GET. */
export async function quickGet(
  s3: S3Handle,
  bucket: string,
  key: string,
  listed: Listed & { etag: string },
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<WholeAnswer | undefined> {
  const bound = bounded(signal, timeoutMs);
  try {
    const etag = listed.etag.startsWith('"') ? listed.etag : `"${listed.etag}"`;
    const answer = await sendQuick(
      s3,
      { method: "GET", bucket, key, headers: { "if-match": etag, "x-amz-content-sha256": EMPTY_SHA256 } },
      bound.signal,
    );
    if (!answer) return undefined;
    const length = answer.headers.get("content-length");
    if (
      answer.status !== 200 ||
      (length !== null && length !== String(listed.size)) ||
      answer.headers.has("content-range")
    ) {
      await answer.body?.cancel().catch(() => {});
      return undefined;
    }
    // With its length said, the body is read by fetch into one buffer (fetch reads no more than that); else counted.
    const bytes =
      length === String(listed.size)
        ? new Uint8Array(await answer.arrayBuffer())
        : await readExactly(answer.body, listed.size);
    return bytes?.length === listed.size ? { output: asGetOutput(answer.headers, bytes), bytes } : undefined;
  } catch {
    // Whatever went wrong, the SDK's GET tries again and reports it (a cancel: it sees the aborted signal too).
    return undefined;
  } finally {
    bound.done();
  }
}

export interface QuickPut {
  bucket: string;
  key: string;
  body: Uint8Array;
  /** The body's MD5, sent as Content-MD5. */
  md5: Buffer;
  contentType?: string;
  cacheControl?: string;
  storageClass?: string;
  metadata?: Record<string, string>;
  /** The call's own encryption; absent: the store's. */
  encryption?: WriteEncryption;
}

/** What a PUT's headers are made of, whatever carries its body. */
export type PutFields = Pick<
  QuickPut,
  "key" | "contentType" | "cacheControl" | "storageClass" | "metadata" | "encryption"
>;

/** Whether a PUT's key and header values may be sent by hand: as the SDK would send them (plain values, token names, no dot segments). */
export function plainPut(put: PutFields): boolean {
  const values = [
    put.contentType ?? "",
    put.cacheControl ?? "",
    put.storageClass ?? "",
    put.encryption?.kmsKeyId ?? "",
    ...Object.values(put.metadata ?? {}),
  ];
  return (
    !DOT_SEGMENT.test(put.key) &&
    values.every((v) => PLAIN_VALUE.test(v)) &&
    Object.keys(put.metadata ?? {}).every((k) => TOKEN.test(k))
  );
}

/** A PUT's headers as the SDK sends them: Content-MD5 (base64), the body unsigned (payload-hash.ts), type, cache control, storage class, metadata. */
export function putHeaders(put: PutFields, md5: Buffer, encryption?: WriteEncryption): Record<string, string> {
  const headers: Record<string, string> = {
    "content-md5": md5.toString("base64"),
    "x-amz-content-sha256": "UNSIGNED-PAYLOAD",
    ...encryptionHeaders(encryption),
  };
  if (put.contentType) headers["content-type"] = put.contentType;
  if (put.cacheControl) headers["cache-control"] = put.cacheControl;
  if (put.storageClass) headers["x-amz-storage-class"] = put.storageClass;
  for (const [name, value] of Object.entries(put.metadata ?? {})) headers[`x-amz-meta-${name.toLowerCase()}`] = value;
  return headers;
}

/** Whether a PUT may take the quick path (the client's checksum setting is checked when it is sent). */
export function quickPutFits(put: QuickPut): boolean {
  return put.body.byteLength <= QUICK_MAX_BYTES && plainPut(put);
}

/** Stores the object; its answer's ETag and version, or undefined: then send the SDK's PutObject. */
export async function quickPut(
  s3: S3Handle,
  put: QuickPut,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<PutObjectCommandOutput | undefined> {
  const bound = bounded(signal, timeoutMs);
  try {
    if ((await s3.fetchClient.config.requestChecksumCalculation()) !== "WHEN_REQUIRED") return undefined;
    const headers = putHeaders(put, put.md5, put.encryption ?? s3.encryption);
    const answer = await sendQuick(
      s3,
      { method: "PUT", bucket: put.bucket, key: put.key, headers, body: put.body },
      bound.signal,
    );
    if (!answer) return undefined;
    await answer.body?.cancel().catch(() => {});
    if (answer.status !== 200) return undefined;
    const header = (name: string) => answer.headers.get(name) ?? undefined;
    // Encryption as the SDK would report it: under KMS or a customer key the ETag is no MD5 (checkEtag then has nothing to compare).
    return {
      $metadata: { httpStatusCode: 200 },
      ETag: header("etag"),
      VersionId: header("x-amz-version-id"),
      ServerSideEncryption: header("x-amz-server-side-encryption") as never,
      SSECustomerAlgorithm: header("x-amz-server-side-encryption-customer-algorithm"),
    };
  } catch {
    return undefined;
  } finally {
    bound.done();
  }
}

export interface QuickCopy {
  /** x-amz-copy-source as the SDK's CopyObject sends it (copy.ts, copySource). */
  copySource: string;
  /** The listed ETag the source is pinned to. */
  etag: string;
  bucket: string;
  key: string;
}

/** Whether a copy within one store may take the quick path (the client's checksum setting is checked when it is sent). */
export function quickCopyFits(
  source: { key: string; versionId?: string },
  key: string,
  listed: Listed | undefined,
  copiesHeaders: boolean,
  conditional: boolean,
): listed is Listed & { etag: string } {
  return copiesHeaders && !conditional && !DOT_SEGMENT.test(key) && quickGetFits(source.key, listed, source.versionId);
}

/** Copies the object within its store; the new ETag and versions, or undefined: then send the SDK's CopyObject. */
export async function quickCopy(
  s3: S3Handle,
  copy: QuickCopy,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<CopyObjectCommandOutput | undefined> {
  const bound = bounded(signal, timeoutMs);
  try {
    if ((await s3.fetchClient.config.requestChecksumCalculation()) !== "WHEN_REQUIRED") return undefined;
    const etag = copy.etag.startsWith('"') ? copy.etag : `"${copy.etag}"`;
    const headers = {
      "x-amz-copy-source": copy.copySource,
      "x-amz-copy-source-if-match": etag,
      "x-amz-metadata-directive": "COPY",
      "x-amz-content-sha256": EMPTY_SHA256,
      ...encryptionHeaders(s3.encryption),
    };
    const answer = await sendQuick(s3, { method: "PUT", bucket: copy.bucket, key: copy.key, headers }, bound.signal);
    if (!answer) return undefined;
    const text =
      answer.status === 200
        ? await readText(answer.body, 64 * 1024)
        : (await answer.body?.cancel().catch(() => {}), undefined);
    const newEtag =
      text?.includes("<CopyObjectResult") && !text.includes("<Error")
        ? text.match(/<ETag>([^<]*)<\/ETag>/)?.[1]
        : undefined;
    if (!newEtag) return undefined;
    const header = (name: string) => answer.headers.get(name) ?? undefined;
    return {
      $metadata: { httpStatusCode: 200 },
      CopyObjectResult: { ETag: newEtag.replaceAll("&quot;", '"').replaceAll("&#34;", '"') },
      VersionId: header("x-amz-version-id"),
      CopySourceVersionId: header("x-amz-copy-source-version-id"),
    };
  } catch {
    return undefined;
  } finally {
    bound.done();
  }
}

/** The answer in the SDK's shape, as far as a download reads it. */
export function asGetOutput(headers: Headers, bytes: Uint8Array): GetObjectCommandOutput {
  const metadata: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name.startsWith("x-amz-meta-")) metadata[name.slice("x-amz-meta-".length)] = value;
  });
  const header = (name: string) => headers.get(name) ?? undefined;
  const modified = header("last-modified");
  return {
    $metadata: { httpStatusCode: 200 },
    Body: oneChunk(bytes) as never,
    ContentLength: bytes.byteLength,
    ETag: header("etag"),
    LastModified: modified ? new Date(modified) : undefined,
    ContentType: header("content-type"),
    CacheControl: header("cache-control"),
    VersionId: header("x-amz-version-id"),
    StorageClass: header("x-amz-storage-class") as never,
    Metadata: metadata,
    // What the object's checks read (integrity.ts): under KMS or a customer key the ETag is no MD5; checksums when sent.
    ServerSideEncryption: header("x-amz-server-side-encryption") as never,
    SSECustomerAlgorithm: header("x-amz-server-side-encryption-customer-algorithm"),
    ChecksumCRC32: header("x-amz-checksum-crc32"),
    ChecksumSHA1: header("x-amz-checksum-sha1"),
    ChecksumSHA256: header("x-amz-checksum-sha256"),
    ChecksumType: header("x-amz-checksum-type") as never,
  };
}

async function* oneChunk(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  if (bytes.byteLength > 0) yield bytes;
}
