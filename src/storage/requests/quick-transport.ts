/**
 * How the quick requests (quick-requests.ts) are signed, addressed and sent:
 * SigV4 as the SDK signs (sigv4.ts) with the client's credentials provider
 * (each identity registered for scrubbing, as guards.ts does for the SDK's
 * requests) and region; the URL the SDK's presigner gives for the
 * bucket (path style, virtual host, custom endpoint: the client's own), the
 * key encoded as the SDK encodes it; Bun's fetch, never following a
 * redirect; the caller's signal or a timeout, released when done; bodies
 * read only up to what is expected.
 */

import { registerResolvedCredentials } from "../../runtime/redact.ts";
import { saidBytes, timedStoreRequest } from "../../runtime/telemetry.ts";
import type { S3Handle } from "./client.ts";
import { customerKeyHeaders } from "./encryption.ts";
import { type ChunkSeed, escapeUri, type SigningIdentity, signV4 } from "./sigv4.ts";
import { storedBytes } from "./stored-bytes.ts";

/** Buckets whose URL is remembered per client (a bulk job uses one or two). */
const BUCKETS_REMEMBERED = 64;
/**
 * How long the credentials provider's identity is reused before it is asked again. Short beside any expiry the SDK
 * refreshes ahead of (5 minutes for temporary credentials).
 */
const IDENTITY_REUSE_MS = 1000;

/** What the SDK sends as the payload hash of a request without a body (a PUT's is unsigned: payload-hash.ts). */
export { EMPTY_SHA256 } from "./sigv4.ts";

interface Quick {
  /** The identity to sign with now (the client's provider: cached, refreshed as it decides). */
  identity(): Promise<SigningIdentity>;
  region: string;
  /** Bucket → the URL its keys are appended to, or null when the SDK gave none (no credentials to sign with). */
  bases: Map<string, Promise<string | null>>;
}

const perHandle = new WeakMap<S3Handle, Promise<Quick>>();

export interface QuickRequest {
  method: "GET" | "PUT" | "HEAD";
  bucket: string;
  /** Undefined: the bucket itself (a HEAD of the bucket). */
  key?: string;
  /** Headers to sign and send (host is added). */
  headers: Record<string, string>;
  /** Query parameters to sign and send (a part's partNumber and uploadId). */
  query?: Record<string, string>;
  /**
   * A stream is sent as it is read (its length must be in the headers); a
   * function makes the stream of a body signed chunk by chunk from the
   * request's signature (signed-chunks.ts, its headers given by the caller).
   */
  body?: Uint8Array | ReadableStream<Uint8Array> | ((seed: ChunkSeed) => ReadableStream<Uint8Array>);
}

/** Signs and sends one request for `key` in `bucket`, addressed as the SDK would; undefined when the SDK gives no URL to sign for. */
export async function sendQuick(s3: S3Handle, req: QuickRequest, signal: AbortSignal): Promise<Response | undefined> {
  const send = await signQuick(s3, req);
  return send?.(signal);
}

/**
 * Signs `req` now and returns what sends it: the signing's CPU stays out of a
 * timed round trip (nearness.ts). Undefined when the SDK gives no URL to sign for.
 */
export async function signQuick(
  s3: S3Handle,
  req: QuickRequest,
): Promise<((signal: AbortSignal) => Promise<Response>) | undefined> {
  const quick = await quickFor(s3);
  const base = await baseUrl(s3, quick, req.bucket);
  if (base === null) return undefined;
  const query = Object.entries(req.query ?? {});
  const search = query.map(([name, value]) => `${escapeUri(name)}=${escapeUri(value)}`).join("&");
  // The bucket itself: its base as it is (a URL without a path gets "/", as the SDK sends a virtual-host bucket's HEAD).
  const url = new URL(`${base}${req.key === undefined ? "" : `/${encodeKey(req.key)}`}${search ? `?${search}` : ""}`);
  const { headers, seed } = signV4(
    {
      method: req.method,
      path: url.pathname,
      query: Object.fromEntries(query),
      headers: { host: url.host, ...req.headers, ...customerKeyHeaders(s3.customerKey, req) },
    },
    await quick.identity(),
    quick.region,
    "s3",
  );
  const stream = typeof req.body === "function" ? req.body(seed) : req.body;
  const body =
    stream instanceof ReadableStream
      ? { body: stream, duplex: "half" }
      : stream
        ? { body: stream as Uint8Array<ArrayBuffer> }
        : {};
  // Not inflated: an object stored with Content-Encoding: gzip is its gzip bytes (its Content-Length, its MD5).
  const operation = operationOf(req);
  return (signal) =>
    timedStoreRequest(
      operation,
      () => storedBytes(url, { method: req.method, headers, ...body, redirect: "manual", signal } as RequestInit),
      (answer) => ({ status: answer.status, length: answer.headers.get("content-length") }),
      () => ({ bucket: req.bucket, ...saidBytes("sentBytes", headers["content-length"]) }),
    );
}

/** The S3 operation a quick request is, for the store-request figure. */
function operationOf(req: QuickRequest): string {
  if (req.method === "HEAD") return req.key === undefined ? "HeadBucket" : "HeadObject";
  if (req.method === "GET") return "GetObject";
  if (req.query?.uploadId !== undefined) return "UploadPart";
  return "x-amz-copy-source" in req.headers ? "CopyObject" : "PutObject";
}

/** Whether requests for `bucket` can be addressed and signed here (the SDK gives its URL). */
export async function quickAddressable(s3: S3Handle, bucket: string): Promise<boolean> {
  return (await baseUrl(s3, await quickFor(s3), bucket)) !== null;
}

/**
 * The caller's signal or a timeout, whichever comes first, released as soon as
 * the request is done. (AbortSignal.timeout would keep each finished request's
 * signal, and what fetch hung on it, alive until its timer fired: thousands of
 * small requests a minute piled up tens of MB.)
 */
export function bounded(signal: AbortSignal | undefined, timeoutMs: number): { signal: AbortSignal; done(): void } {
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

/** What signs for a client, made on first use (a start that only lists tools loads no SDK). */
function quickFor(s3: S3Handle): Promise<Quick> {
  let quick = perHandle.get(s3);
  if (!quick) {
    const config = s3.fetchClient.config;
    // The provider's identity, asked again once IDENTITY_REUSE_MS have passed: it caches and refreshes as it decides,
    // but each ask runs its async chain, a bulk job's thousands of requests a second ran it once each.
    let last: { identity: Promise<SigningIdentity>; at: number } | undefined;
    quick = (async () => ({
      identity: () => {
        const now = performance.now();
        if (!last || now - last.at > IDENTITY_REUSE_MS) {
          const identity = config.credentials().then((got) => {
            // Whatever signs a request is registered for scrubbing first, as the SDK's own requests are (guards.ts).
            registerResolvedCredentials(got);
            return got;
          });
          // A failed ask is not reused: the next request asks again.
          identity.catch(() => {
            if (last?.identity === identity) last = undefined;
          });
          last = { identity, at: now };
        }
        return last.identity;
      },
      region: await config.region(),
      bases: new Map(),
    }))();
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
      const url = new URL(
        await getSignedUrl(s3.presignClient, new s3.sdk.GetObjectCommand({ Bucket: bucket, Key: "k" }), {
          expiresIn: 60,
        }),
      );
      return url.pathname.endsWith("/k") ? `${url.origin}${url.pathname.slice(0, -2)}` : null;
    })().catch(() => null);
    quick.bases.set(bucket, base);
  }
  return base;
}

/** A key as the SDK puts it in a path: each segment percent-encoded, including !'()*. */
function encodeKey(key: string): string {
  // Most keys need no escape: the same string.
  return UNRESERVED_PATH.test(key) ? key : key.split("/").map(escapeUri).join("/");
}

/** Unreserved characters (RFC 3986) and the slash: a path of only these is its own encoding. */
const UNRESERVED_PATH = /^[A-Za-z0-9\-._~/]*$/;

/** The body if it is exactly `size` bytes (a proxy may send it chunked, without a length); stops reading past that. */
export async function readExactly(
  body: ReadableStream<Uint8Array> | null,
  size: number,
): Promise<Uint8Array | undefined> {
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

/** A small answer's text, or undefined past `cap` bytes. */
export async function readText(body: ReadableStream<Uint8Array> | null, cap: number): Promise<string | undefined> {
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.byteLength;
    if (seen > cap) {
      // Not read to its end: let the connection go rather than leave it waiting on an unread body.
      await body.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
