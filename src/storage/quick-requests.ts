/**
 * A small object's GET, PUT or copy without the SDK's middleware stack.
 *
 * A bulk download, a directory upload or a copy between stores of thousands
 * of small objects is bound by the request rate, and there the SDK's
 * per-request work (building the handler stack, endpoint rules, schema
 * serde) is most of our CPU: 0.58 ms a GET against 0.18 ms for the same GET
 * signed here and sent with fetch (2,000 objects of 4-64 KiB, 64 at once,
 * Ceph RGW on loopback; on two cores shared with the store that CPU is the
 * job's speed).
 *
 * The request is the SDK's own in every part that matters: its signer
 * (SignatureV4, the client's credentials provider, region and hash), the URL
 * the SDK itself produces for the bucket (learned once per bucket from a
 * presigned URL, so path style, virtual hosts and custom endpoints are the
 * client's), the key encoded as the SDK encodes it. It is tried only where
 * nothing else is needed:
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
import type { SignatureV4 } from "@smithy/signature-v4";
import { registerResolvedCredentials } from "../runtime/redact.ts";
import type { S3Handle } from "./client.ts";

/** Objects up to this size take the quick GET or PUT. */
export const QUICK_MAX_BYTES = 1024 * 1024;
/** Buckets whose URL is remembered per client (a bulk job uses one or two). */
const BUCKETS_REMEMBERED = 64;
/** SHA-256 of an empty body: what the SDK sends as a GET's payload hash (a PUT's is unsigned: payload-hash.ts). */
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const PLAIN_MD5_ETAG = /^"?[0-9a-fA-F]{32}"?$/;
const DOT_SEGMENT = /(^|\/)\.\.?(\/|$)/;
/** Header values the SDK would send unchanged; anything else goes through the SDK. */
const PLAIN_VALUE = /^[\x20-\x7e]*$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export interface Listed {
  size: number;
  etag: string | null;
}

interface Quick {
  signer: SignatureV4;
  /** Bucket → the URL its keys are appended to, or null when the SDK gave none (no credentials to sign with). */
  bases: Map<string, Promise<string | null>>;
}

const perHandle = new WeakMap<S3Handle, Promise<Quick>>();

/** Whether a listed object may take the quick GET. */
export function quickGetFits(key: string, listed: Listed | undefined, versionId: string | undefined): listed is Listed & { etag: string } {
  return listed !== undefined && versionId === undefined && listed.size <= QUICK_MAX_BYTES && listed.etag !== null && PLAIN_MD5_ETAG.test(listed.etag) && !DOT_SEGMENT.test(key);
}

/** The object's whole body as a GET answer, or undefined: then send the SDK's GET. */
export async function quickGet(s3: S3Handle, bucket: string, key: string, listed: Listed & { etag: string }, signal: AbortSignal, timeoutMs: number): Promise<GetObjectCommandOutput | undefined> {
  const bound = bounded(signal, timeoutMs);
  try {
    const quick = await quickFor(s3);
    const base = await baseUrl(s3, quick, bucket);
    if (base === null) return undefined;
    const url = new URL(`${base}/${encodeKey(key)}`);
    const etag = listed.etag.startsWith('"') ? listed.etag : `"${listed.etag}"`;
    const signed = await quick.signer.sign({
      method: "GET",
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: {},
      headers: { host: url.host, "if-match": etag, "x-amz-content-sha256": EMPTY_SHA256 },
    });
    const answer = await fetch(url, { headers: signed.headers, redirect: "manual", signal: bound.signal });
    const length = answer.headers.get("content-length");
    if (answer.status !== 200 || (length !== null && length !== String(listed.size)) || answer.headers.has("content-range")) {
      await answer.body?.cancel().catch(() => {});
      return undefined;
    }
    const bytes = await readExactly(answer.body, listed.size);
    return bytes && asGetOutput(answer.headers, bytes);
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
}

/** Whether a PUT may take the quick path (the client's checksum setting is checked when it is sent). */
export function quickPutFits(put: QuickPut): boolean {
  const values = [put.contentType ?? "", put.cacheControl ?? "", put.storageClass ?? "", ...Object.values(put.metadata ?? {})];
  return put.body.byteLength <= QUICK_MAX_BYTES && !DOT_SEGMENT.test(put.key) && values.every((v) => PLAIN_VALUE.test(v)) && Object.keys(put.metadata ?? {}).every((k) => TOKEN.test(k));
}

/** Stores the object; its answer's ETag and version, or undefined: then send the SDK's PutObject. */
export async function quickPut(s3: S3Handle, put: QuickPut, signal: AbortSignal | undefined, timeoutMs: number): Promise<PutObjectCommandOutput | undefined> {
  const bound = bounded(signal, timeoutMs);
  try {
    if ((await s3.fetchClient.config.requestChecksumCalculation()) !== "WHEN_REQUIRED") return undefined;
    const quick = await quickFor(s3);
    const base = await baseUrl(s3, quick, put.bucket);
    if (base === null) return undefined;
    const url = new URL(`${base}/${encodeKey(put.key)}`);
    const headers: Record<string, string> = { host: url.host, "content-md5": put.md5.toString("base64"), "x-amz-content-sha256": "UNSIGNED-PAYLOAD" };
    if (put.contentType) headers["content-type"] = put.contentType;
    if (put.cacheControl) headers["cache-control"] = put.cacheControl;
    if (put.storageClass) headers["x-amz-storage-class"] = put.storageClass;
    for (const [name, value] of Object.entries(put.metadata ?? {})) headers[`x-amz-meta-${name.toLowerCase()}`] = value;
    const signed = await quick.signer.sign({ method: "PUT", protocol: url.protocol, hostname: url.hostname, ...(url.port ? { port: Number(url.port) } : {}), path: url.pathname, query: {}, headers });
    const answer = await fetch(url, { method: "PUT", headers: signed.headers, body: put.body as Uint8Array<ArrayBuffer>, redirect: "manual", signal: bound.signal });
    await answer.body?.cancel().catch(() => {});
    if (answer.status !== 200) return undefined;
    const header = (name: string) => answer.headers.get(name) ?? undefined;
    // Encryption as the SDK would report it: under KMS or a customer key the ETag is no MD5 (checkEtag then has nothing to compare).
    return { $metadata: { httpStatusCode: 200 }, ETag: header("etag"), VersionId: header("x-amz-version-id"), ServerSideEncryption: header("x-amz-server-side-encryption") as never, SSECustomerAlgorithm: header("x-amz-server-side-encryption-customer-algorithm") };
  } catch {
    return undefined;
  } finally {
    bound.done();
  }
}

export interface QuickCopy {
  source: { bucket: string; key: string; etag: string };
  bucket: string;
  key: string;
}

/** Whether a copy within one store may take the quick path (the client's checksum setting is checked when it is sent). */
export function quickCopyFits(source: { key: string; versionId?: string }, key: string, listed: Listed | undefined, copiesHeaders: boolean, conditional: boolean): listed is Listed & { etag: string } {
  return copiesHeaders && !conditional && !DOT_SEGMENT.test(key) && quickGetFits(source.key, listed, source.versionId);
}

/** Copies the object within its store; the new ETag and versions, or undefined: then send the SDK's CopyObject. */
export async function quickCopy(s3: S3Handle, copy: QuickCopy, signal: AbortSignal | undefined, timeoutMs: number): Promise<CopyObjectCommandOutput | undefined> {
  const bound = bounded(signal, timeoutMs);
  try {
    if ((await s3.fetchClient.config.requestChecksumCalculation()) !== "WHEN_REQUIRED") return undefined;
    const quick = await quickFor(s3);
    const base = await baseUrl(s3, quick, copy.bucket);
    if (base === null) return undefined;
    const url = new URL(`${base}/${encodeKey(copy.key)}`);
    const etag = copy.source.etag.startsWith('"') ? copy.source.etag : `"${copy.source.etag}"`;
    const headers = {
      host: url.host,
      "x-amz-copy-source": `${copy.source.bucket}/${copy.source.key.split("/").map(encodeURIComponent).join("/")}`,
      "x-amz-copy-source-if-match": etag,
      "x-amz-metadata-directive": "COPY",
      "x-amz-content-sha256": EMPTY_SHA256,
    };
    const signed = await quick.signer.sign({ method: "PUT", protocol: url.protocol, hostname: url.hostname, ...(url.port ? { port: Number(url.port) } : {}), path: url.pathname, query: {}, headers });
    const answer = await fetch(url, { method: "PUT", headers: signed.headers, redirect: "manual", signal: bound.signal });
    const text = answer.status === 200 ? await readText(answer.body, 64 * 1024) : (await answer.body?.cancel().catch(() => {}), undefined);
    const newEtag = text?.includes("<CopyObjectResult") && !text.includes("<Error") ? text.match(/<ETag>([^<]*)<\/ETag>/)?.[1] : undefined;
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

/** A small answer's text, or undefined past `cap` bytes. */
async function readText(body: ReadableStream<Uint8Array> | null, cap: number): Promise<string | undefined> {
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.byteLength;
    if (seen > cap) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The caller's signal or a timeout, whichever comes first, released as soon as
 * the request is done. (AbortSignal.timeout would keep each finished request's
 * signal, and what fetch hung on it, alive until its timer fired: thousands of
 * small requests a minute piled up tens of MB.)
 */
function bounded(signal: AbortSignal | undefined, timeoutMs: number): { signal: AbortSignal; done(): void } {
  const stop = new AbortController();
  const abort = () => stop.abort(signal?.reason);
  const timer = setTimeout(() => stop.abort(new Error("timed out")), timeoutMs);
  if (signal?.aborted) abort();
  else signal?.addEventListener("abort", abort, { once: true });
  return {
    signal: stop.signal,
    done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
    },
  };
}

/** The signer is loaded with the SDK, on first use (a start that only lists tools loads neither). */
function quickFor(s3: S3Handle): Promise<Quick> {
  let quick = perHandle.get(s3);
  if (!quick) {
    const config = s3.fetchClient.config;
    // Whatever signs a request is registered for scrubbing first, as the SDK's own requests are (guards.ts).
    const credentials = async () => {
      const identity = await config.credentials();
      registerResolvedCredentials(identity);
      return identity;
    };
    quick = import("@smithy/signature-v4").then(({ SignatureV4 }) => ({
      signer: new SignatureV4({ credentials, region: config.region, service: "s3", sha256: config.sha256, uriEscapePath: false, applyChecksum: false }),
      bases: new Map(),
    }));
    perHandle.set(s3, quick);
  }
  return quick;
}

/** The URL the SDK addresses `bucket`'s keys under: a presigned URL for the key "k", without it. */
function baseUrl(s3: S3Handle, quick: Quick, bucket: string): Promise<string | null> {
  let base = quick.bases.get(bucket);
  if (!base) {
    if (quick.bases.size >= BUCKETS_REMEMBERED) quick.bases.clear();
    base = (async () => {
      const { getSignedUrl } = await import("@aws-sdk/s3-request-presigner");
      const url = new URL(await getSignedUrl(s3.presignClient, new s3.sdk.GetObjectCommand({ Bucket: bucket, Key: "k" }), { expiresIn: 60 }));
      return url.pathname.endsWith("/k") ? `${url.origin}${url.pathname.slice(0, -2)}` : null;
    })().catch(() => null);
    quick.bases.set(bucket, base);
  }
  return base;
}

/** A key as the SDK puts it in a path: each segment percent-encoded, including !'()*. */
function encodeKey(key: string): string {
  return key
    .split("/")
    .map((part) => encodeURIComponent(part).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join("/");
}

/** The body if it is exactly `size` bytes (a proxy may send it chunked, without a length); stops reading past that. */
async function readExactly(body: ReadableStream<Uint8Array> | null, size: number): Promise<Uint8Array | undefined> {
  const bytes = new Uint8Array(size);
  let at = 0;
  if (body) {
    for await (const chunk of body) {
      if (at + chunk.byteLength > size) {
        await body.cancel().catch(() => {});
        return undefined;
      }
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
  }
  return at === size ? bytes : undefined;
}

/** The answer in the SDK's shape, as far as a download reads it. */
function asGetOutput(headers: Headers, bytes: Uint8Array): GetObjectCommandOutput {
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
