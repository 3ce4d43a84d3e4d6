/**
 * An upload that fits in one part: its bytes read into one buffer (or taken
 * as they are, already in memory), sent as one PutObject with their
 * Content-MD5 (a quick request where its headers allow, else the SDK's), its
 * ETag checked against that MD5. A copy of a source that promises its MD5
 * (`wholeMd5`) sends that one, unhashed: the store checks the bytes against
 * the source's own promise. And the object parameters every upload's first
 * request carries (upload.ts).
 */
import { createHash } from "node:crypto";
import { fetchClientFor, type S3Handle } from "../requests/client.ts";
import { encryptionParams } from "../requests/encryption.ts";
import { type QuickPut, quickPut, quickPutFits } from "../requests/quick-requests.ts";
import type { UploadRequest, UploadResult } from "../types.ts";
import { checkEtag, readFully } from "./upload-bytes.ts";

export async function putSingle(
  s3: S3Handle,
  req: UploadRequest,
  signal: AbortSignal | undefined,
  requestTimeoutMs: number,
): Promise<UploadResult> {
  const { sdk } = s3;
  const fetchClient = fetchClientFor(s3, req.key);
  const body = req.bytes?.byteLength === req.size ? req.bytes : await readAll(req);
  signal?.throwIfAborted();
  const md5 = req.wholeMd5 ? Buffer.from(req.wholeMd5, "hex") : createHash("md5").update(body).digest();
  const quick: QuickPut = {
    bucket: req.bucket,
    key: req.key,
    body,
    md5,
    contentType: req.contentType,
    ...(req.cacheControl ? { cacheControl: req.cacheControl } : {}),
    ...(req.storageClass ? { storageClass: req.storageClass } : {}),
    ...(req.metadata ? { metadata: req.metadata } : {}),
    ...(req.encryption ? { encryption: req.encryption } : {}),
  };
  const out =
    (quickPutFits(quick) ? await quickPut(s3, quick, signal, requestTimeoutMs) : undefined) ??
    (await fetchClient.send(
      new sdk.PutObjectCommand({
        ...objectParams(req),
        Body: body,
        ContentLength: req.size,
        ContentMD5: md5.toString("base64"),
      }),
      { abortSignal: signal },
    ));
  checkEtag(out, md5, req, "object");
  req.onProgress?.(req.size);
  return { etag: out.ETag ?? null, version_id: out.VersionId ?? null };
}

async function readAll(req: UploadRequest): Promise<Buffer> {
  const body = Buffer.allocUnsafe(req.size);
  await readFully(req, body, 0);
  return body;
}

/** What PutObject and CreateMultipartUpload say of the object: its key, type, class, cache control, metadata, encryption. */
export function objectParams(req: UploadRequest) {
  return {
    Bucket: req.bucket,
    Key: req.key,
    ContentType: req.contentType,
    ...(req.storageClass ? { StorageClass: req.storageClass as never } : {}),
    ...(req.cacheControl ? { CacheControl: req.cacheControl } : {}),
    ...(req.metadata ? { Metadata: req.metadata } : {}),
    ...encryptionParams(req.encryption),
  };
}
