/**
 * AWS Signature Version 4 for the quick requests (quick-transport.ts): the
 * same Authorization header the SDK's SignatureV4 writes for the same request
 * and instant (test/unit/storage/sigv4.test.ts holds the two equal), at a
 * fraction of its CPU. A bulk job of small objects signs one request a file,
 * and the SDK's signer (a request clone, async hashing through its hash
 * wrapper, hex by a JS loop) was the largest single part of a small
 * download's main-thread work after the collector (docs/performance.md).
 * Only header signing, only HMAC-SHA256, S3's rules: the path is signed as
 * sent (no second encoding), the payload hash is the x-amz-content-sha256
 * header the caller sets.
 */
import { createHash, createHmac } from "node:crypto";

export interface SigningIdentity {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface RequestToSign {
  method: string;
  /** The URL's path, already encoded as it is sent. */
  path: string;
  query: Record<string, string>;
  /** Lower-case names; host and x-amz-content-sha256 among them. */
  headers: Record<string, string>;
}

/** Headers SigV4 never signs (the SDK's list), and the prefixes it skips. */
const UNSIGNABLE = new Set([
  "authorization",
  "cache-control",
  "connection",
  "expect",
  "from",
  "keep-alive",
  "max-forwards",
  "pragma",
  "referer",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "user-agent",
  "x-amzn-trace-id",
]);
const UNSIGNABLE_PREFIX = /^(proxy-|sec-)/;
/** Signing keys by day, region and identity: one a day and identity, a handful at most. */
const KEYS_REMEMBERED = 16;
const signingKeys = new Map<string, Buffer>();
/** Each identity's key in that map (a provider hands out the same object until it refreshes). */
const identityIds = new WeakMap<SigningIdentity, string>();

/**
 * What a body signed chunk by chunk (STREAMING-AWS4-HMAC-SHA256-PAYLOAD,
 * signed-chunks.ts) continues from: the request's own signature, its key,
 * instant and scope.
 */
export interface ChunkSeed {
  signature: string;
  key: Buffer;
  longDate: string;
  scope: string;
}

/**
 * `headers` with x-amz-date, x-amz-security-token (with a session token) and
 * authorization added, signed at `now`; and what a body signed chunk by chunk
 * goes on from.
 */
export function signV4(
  req: RequestToSign,
  identity: SigningIdentity,
  region: string,
  service: string,
  now: Date = new Date(),
): { headers: Record<string, string>; seed: ChunkSeed } {
  const longDate = now.toISOString().replace(/[-:]|\.\d{3}/g, "");
  const shortDate = longDate.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    const lower = name.toLowerCase();
    if (lower !== "authorization" && lower !== "x-amz-date" && lower !== "date") headers[lower] = value;
  }
  headers["x-amz-date"] = longDate;
  if (identity.sessionToken) headers["x-amz-security-token"] = identity.sessionToken;
  const signed = Object.keys(headers)
    .filter((name) => !UNSIGNABLE.has(name) && !UNSIGNABLE_PREFIX.test(name))
    .sort();
  const canonicalHeaders = signed.map((name) => `${name}:${canonicalValue(headers[name]!)}\n`).join("");
  const signedNames = signed.join(";");
  const payloadHash = headers["x-amz-content-sha256"] ?? EMPTY_SHA256;
  const canonical = `${req.method}\n${req.path}\n${canonicalQuery(req.query)}\n${canonicalHeaders}\n${signedNames}\n${payloadHash}`;
  const scope = `${shortDate}/${region}/${service}/aws4_request`;
  const toSign = `AWS4-HMAC-SHA256\n${longDate}\n${scope}\n${createHash("sha256").update(canonical).digest("hex")}`;
  const key = signingKey(identity, shortDate, region, service);
  const signature = createHmac("sha256", key).update(toSign).digest("hex");
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${identity.accessKeyId}/${scope}, SignedHeaders=${signedNames}, Signature=${signature}`;
  return { headers, seed: { signature, key, longDate, scope } };
}

/** SHA-256 of an empty body: the payload hash of a request without one. */
export const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

function canonicalValue(value: string): string {
  // Most values are already canonical: no line break, tab, doubled, leading or trailing space.
  if (!NOT_CANONICAL.test(value)) return value;
  return value
    .replace(/[\r\n]/g, " ")
    .replace(/[ \t]+/g, " ")
    .replace(/^ | $/g, "");
}

function canonicalQuery(query: Record<string, string>): string {
  return Object.entries(query)
    .filter(([name]) => name.toLowerCase() !== "x-amz-signature")
    .map(([name, value]) => [escapeUri(name), escapeUri(value)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
}

const NOT_CANONICAL = /[\r\n\t]| {2}|^ | $/;

/** RFC 3986 percent-encoding, as SigV4 canonicalizes a query. */
export function escapeUri(part: string): string {
  if (UNRESERVED.test(part)) return part;
  return encodeURIComponent(part).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** RFC 3986's unreserved characters: a string of only these is its own encoding. */
const UNRESERVED = /^[A-Za-z0-9\-._~]*$/;

function signingKey(identity: SigningIdentity, shortDate: string, region: string, service: string): Buffer {
  // The secret itself is no part of the map's key: a hash of it is (a key never kept as text beside the others).
  let id = identityIds.get(identity);
  if (id === undefined) {
    id = createHash("sha256").update(`${identity.accessKeyId}\n${identity.secretAccessKey}`).digest("base64");
    identityIds.set(identity, id);
  }
  const cacheKey = `${shortDate}/${region}/${service}/${id}`;
  let key = signingKeys.get(cacheKey);
  if (!key) {
    key = Buffer.from(`AWS4${identity.secretAccessKey}`);
    for (const part of [shortDate, region, service, "aws4_request"])
      key = createHmac("sha256", key).update(part).digest();
    if (signingKeys.size >= KEYS_REMEMBERED) signingKeys.clear();
    signingKeys.set(cacheKey, key);
  }
  return key;
}
