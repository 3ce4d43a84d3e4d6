/** What comes back from a GET: its metadata, and its body read safely. */
import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";
import { ActionableError, s3Uri } from "../errors.ts";
import { toStorageError, type ErrorContext } from "./errors.ts";
import type { ObjectMeta } from "./types.ts";

export function metaOf(out: GetObjectCommandOutput): ObjectMeta {
  // "bytes 0-99/12345" → 12345; without a Content-Range the length is the whole object.
  const total = out.ContentRange?.match(/\/(\d+)$/)?.[1];
  return {
    content_type: out.ContentType ?? null,
    size: total !== undefined ? Number(total) : (out.ContentLength ?? 0),
    etag: out.ETag ?? null,
    last_modified: iso(out.LastModified),
    version_id: out.VersionId ?? null,
  };
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
  return out;
}

/**
 * The body of a GET, with failures while streaming turned into storage errors
 * and a body that ends short of its Content-Length reported, not accepted.
 */
export async function* checkedBody(body: AsyncIterable<Uint8Array> | undefined, expected: number | undefined, ctx: ErrorContext): AsyncIterable<Uint8Array> {
  let received = 0;
  try {
    if (body) {
      for await (const chunk of body) {
        received += chunk.length;
        yield chunk;
      }
    }
  } catch (err) {
    throw toStorageError(err, ctx);
  }
  if (expected !== undefined && received !== expected) {
    throw new ActionableError({
      resource: s3Uri(ctx.bucket ?? "", ctx.key),
      code: "IncompleteBody",
      message: `The connection ended after ${received} of ${expected} bytes.`,
      hint: "retry the download.",
      retryable: true,
    });
  }
}

export function iso(date: Date | undefined): string | null {
  return date ? date.toISOString() : null;
}
