/** What comes back from a GET: its metadata, and its body read safely. */

import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";
import { releaseChunks } from "../../runtime/memory.ts";
import { iso } from "../iso-date.ts";
import type { ObjectEncryption, ObjectMeta } from "../types.ts";

/** Metadata of a GET answer; `size` is -1 when the store sent neither a Content-Range nor a Content-Length. */
export function metaOf(out: GetObjectCommandOutput): ObjectMeta {
  // "bytes 0-99/12345" → 12345; without a Content-Range the length is the whole object.
  const total = out.ContentRange?.match(/\/(\d+)$/)?.[1];
  return {
    content_type: out.ContentType ?? null,
    size: total !== undefined ? Number(total) : (out.ContentLength ?? -1),
    etag: out.ETag ?? null,
    last_modified: iso(out.LastModified),
    version_id: out.VersionId ?? null,
    encryption: encryptionOf(out),
  };
}

/** How the store says it encrypted an object (a HEAD's or a GET's headers); null: it did not say. */
export function encryptionOf(out: {
  ServerSideEncryption?: string;
  SSEKMSKeyId?: string;
  SSECustomerAlgorithm?: string;
}): ObjectEncryption | null {
  if (!out.ServerSideEncryption && !out.SSECustomerAlgorithm) return null;
  return {
    algorithm: out.ServerSideEncryption ?? "customer key",
    ...(out.SSEKMSKeyId ? { kms_key_id: out.SSEKMSKeyId } : {}),
    ...(out.SSECustomerAlgorithm ? { customer_algorithm: out.SSECustomerAlgorithm } : {}),
  };
}

/** Whether a (possibly ranged) answer carries the whole object. */
export function isWhole(out: GetObjectCommandOutput): boolean {
  const range = out.ContentRange?.match(/^bytes (\d+)-(\d+)\/(\d+)$/);
  if (!out.ContentRange) return true;
  return !!range && Number(range[1] ?? -1) === 0 && Number(range[2] ?? -2) + 1 === Number(range[3] ?? -1);
}

/** Collects up to `max` bytes and then stops reading, closing the connection's stream. */
export async function readAtMost(body: AsyncIterable<Uint8Array> | undefined, max: number): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    const room = max - total;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    total += Math.min(chunk.length, room);
    if (total >= max) break; // leaving the loop destroys the rest of the stream
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  // Copied: the network's chunks are freed now rather than at the next collection (a search reads window after window).
  releaseChunks(chunks);
  return out;
}
