/**
 * The bytes of an upload: a source read fully (a file that shrank is an
 * error, not a short object), a part's MD5 read through a small buffer, and
 * the store's ETag checked against the MD5 of what was sent.
 */
import { createHash } from "node:crypto";
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import type { UploadRequest } from "../transfer-types.ts";
import { etagMd5 } from "./integrity.ts";

/**
 * The store's ETag for what we sent must be its MD5, where the ETag is one
 * (not for KMS or customer-key encryption). Content-MD5 already asked the store
 * to check; this catches a store, or a proxy, that answers for other bytes.
 */
export function checkEtag(
  out: { ETag?: string; ServerSideEncryption?: string; SSECustomerAlgorithm?: string },
  md5: Buffer,
  req: { bucket: string; key: string },
  what: string,
): void {
  const promised = etagMd5(out.ETag, { sse: out.ServerSideEncryption, customerKey: out.SSECustomerAlgorithm });
  const sent = md5.toString("hex");
  if (promised === undefined || promised === sent) return;
  throw new ActionableError({
    resource: s3Uri(req.bucket, req.key),
    code: "IntegrityCheckFailed",
    message: `The store answered the upload of the ${what} with ETag ${promised}, but the MD5 of the bytes sent is ${sent}: what it stored may not be the file.`,
    hint: "upload the file again; if it repeats, the store or a proxy in front of it is corrupting data.",
    retryable: true,
  });
}

/** Fills `into` from the source at `position`; a file that shrank meanwhile is an error, not a short object. */
export async function readFully(req: UploadRequest, into: Uint8Array, position: number): Promise<void> {
  let filled = 0;
  while (filled < into.length) {
    const n = await req.readAt(into.subarray(filled), position + filled);
    if (n === 0) {
      throw new ActionableError({
        resource: s3Uri(req.bucket, req.key),
        code: "LocalFileChanged",
        message: `The local file got shorter while it was being uploaded (${position + filled} of ${req.size} bytes).`,
        hint: "wait until the file is no longer being written, then upload it again. Nothing was stored.",
      });
    }
    filled += n;
  }
}

/** The MD5 of `length` bytes of the source from `start`, read through `buffer`. */
export async function md5Of(req: UploadRequest, buffer: Buffer, start: number, length: number): Promise<Buffer> {
  const hash = createHash("md5");
  for (let done = 0; done < length; ) {
    const piece = buffer.subarray(0, Math.min(buffer.length, length - done));
    await readFully(req, piece, start + done);
    hash.update(piece);
    done += piece.length;
  }
  return hash.digest();
}
