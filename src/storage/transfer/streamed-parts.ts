/**
 * The parts of a multipart upload sent as streamed bodies, for a copy from
 * another store: to a near one when its object has no MD5 to promise (it was
 * stored in parts: its ETag is no MD5 of its bytes, so streamed-put.ts cannot
 * be used), to a far one always (parts in flight make the speed there, and
 * streamed they hold no buffers: the WAN-model copy peaked ~45 MB lower). Each
 * part's bytes go out as the source's own chunks, hashed as they pass and
 * freed once sent: no part is held in a buffer here. Its MD5 cannot go out
 * before its bytes. A store known to check a body signed chunk by chunk
 * (quirks.ts, signedChunks; signed-chunks.ts) gets each 256 KiB's SHA-256
 * in a signature before those bytes, checks them as they come, and refuses
 * the part at the first that differs: no MD5 is computed here (it costs
 * about three times the SHA-256). Any other store gets the body unsigned,
 * and the part's ETag (the MD5 of the bytes the store took) is compared
 * with ours once it answers, a mismatch aborting the whole upload: the same
 * check every part of ours gets (upload.ts, checkEtag). A copy that keeps
 * its source's parts (same-parts.ts) sends them unsigned and hashes
 * nothing: their ETags, composed before Complete, must give the source's.
 * Either way nothing is stored unless every part passed.
 * CompleteMultipartUpload names each part by its ETag: a part replaced
 * after it answered (its request replayed with other bytes) makes the store
 * refuse to complete.
 *
 * Taken where the bytes can be streamed at all (`streamable`: custom
 * endpoints, plain headers). A part the destination fails to take (a
 * network error, a stall, a 5xx or a throttle) is sent once more the way
 * buffered parts are, with Content-MD5 and the SDK's retries (upload.ts):
 * its bytes handed over so far are gone, so they are read from the source
 * again (`rereadAt`, refused unless they hash as those first sent did)
 * and the rest taken from the download as before.
 */
import { createHash } from "node:crypto";
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import type { S3Handle } from "../requests/client.ts";
import { ChunkDigests } from "../requests/signed-chunks.ts";
import type { UploadRequest } from "../types.ts";
import { sendStreamed } from "./streamed-body.ts";

/** What a store answers for a part (the SDK's UploadPart output, or the headers of ours). */
export interface PartAnswer {
  ETag?: string;
  ServerSideEncryption?: string;
  SSECustomerAlgorithm?: string;
}

/**
 * Sends bytes `start` to `start + length` of the source as part `partNumber` of the upload `uploadId`, streamed; a
 * failure worth it (`worthSendingAgain`) sends the part once more through `sendBuffered` (the SDK's UploadPart with
 * Content-MD5, its retries). The answer, and the MD5 of the bytes sent when the store did not check them as
 * they came (signed chunks), for the caller to check against its ETag (checkEtag).
 */
export async function streamPart(
  s3: S3Handle,
  req: UploadRequest,
  uploadId: string,
  partNumber: number,
  start: number,
  length: number,
  signal: AbortSignal,
  idleMs: number,
  sendBuffered: (body: Uint8Array, md5: Buffer) => Promise<PartAnswer>,
): Promise<{ answer: PartAnswer; md5?: Buffer }> {
  // The source's parts kept (same-parts.ts): their ETags, composed before Complete, check every byte; nothing here.
  const composed = req.sameParts !== undefined;
  const signed = s3.quirks.signedChunks && !composed ? new ChunkDigests() : undefined;
  const hash = signed || composed ? undefined : createHash("md5");
  const sameAsFirst = (bytes: Uint8Array) =>
    composed ||
    (signed
      ? new ChunkDigests().fed(bytes).fingerprint().equals(signed.fingerprint())
      : createHash("md5").update(bytes).digest().equals(hash!.copy().digest()));
  let taken = 0;
  let sourceFailed = false;
  try {
    const answer = await sendStreamed(
      s3,
      {
        method: "PUT",
        bucket: req.bucket,
        key: req.key,
        query: { partNumber: String(partNumber), uploadId },
        // Signed chunk by chunk, the payload hash is the encoding's name (streamed-body.ts sets it).
        headers: signed ? {} : { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" },
      },
      req.takeAt!,
      start,
      length,
      {
        signal,
        idleMs,
        onTaken: (chunk, total) => {
          (signed ?? hash)?.update(chunk);
          taken = total;
        },
        onSourceFailure: () => (sourceFailed = true),
        ...(signed ? { signedBy: signed } : {}),
      },
    );
    const header = (name: string) => answer.headers.get(name) ?? undefined;
    return {
      answer: {
        ETag: header("etag"),
        ServerSideEncryption: header("x-amz-server-side-encryption"),
        SSECustomerAlgorithm: header("x-amz-server-side-encryption-customer-algorithm"),
      },
      ...(hash ? { md5: hash.digest() } : {}),
    };
  } catch (err) {
    // The request's own signature was taken when the upload began (same credentials): a chunk's was not, so its bytes changed.
    if (signed && !sourceFailed && refusedSignature(err)) throw chunkRefused(req, partNumber);
    if (sourceFailed || signal.aborted || !req.rereadAt || !worthSendingAgain(err)) throw err;
    // The bytes handed over are gone: read them from the source again (as they were: their MD5), the rest from the download.
    const body = Buffer.allocUnsafe(length);
    await req.rereadAt(body.subarray(0, taken), start, sameAsFirst);
    for (let at = taken; at < length; ) {
      const chunk = await req.takeAt!(start + at, length - at);
      if (chunk.length === 0) throw err;
      body.set(chunk, at);
      at += chunk.length;
    }
    signal.throwIfAborted();
    const md5 = createHash("md5").update(body).digest();
    return { answer: await sendBuffered(body, md5), md5 };
  }
}

function refusedSignature(err: unknown): boolean {
  return (err as { name?: unknown } | undefined)?.name === "SignatureDoesNotMatch";
}

function chunkRefused(req: UploadRequest, partNumber: number): ActionableError {
  return new ActionableError({
    resource: s3Uri(req.bucket, req.key),
    code: "IntegrityCheckFailed",
    message: `The store refused the part ${partNumber}: a chunk of the bytes sent did not match its signature, so they changed on their way; nothing was stored.`,
    hint: "copy it again; if it repeats, the store or a proxy in front of it is corrupting data.",
    retryable: true,
  });
}

/** What the SDK would retry: no answer (a network error, our stall timeout), a 5xx, a throttle. A refusal (4xx) would only be refused again. */
function worthSendingAgain(err: unknown): boolean {
  const status = (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  return status === undefined || status >= 500 || status === 429;
}
