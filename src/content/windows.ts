/**
 * Reading an object's bytes in order, window by window: each window one
 * ranged GET through the storage layer (so the caller's policy, the bucket
 * allowlist and the store's credentials apply to every byte), the later ones
 * pinned to the first answer's version where the store keeps versions. A
 * gzip'd object (told by the gzip magic at its start: a .gz file, or an
 * object stored with `Content-Encoding: gzip`) can be read through its
 * decompression, bounded: a bomb stops at `maxInflated`.
 */
import type { Transform } from "node:stream";
import { createGunzip } from "node:zlib";
import type { ObjectAddress, ObjectMeta, Storage } from "../storage/index.ts";

/** What one window read hands back: the object's facts and these bytes. */
export interface Window {
  meta: ObjectMeta;
  bytes: Uint8Array;
  offset: number;
}

/** The object's bytes from `from` on, `window` bytes per GET, until its end or `limit` bytes. */
export async function* windowsOf(
  storage: Storage,
  addr: ObjectAddress,
  signal: AbortSignal,
  window: number,
  limit = Infinity,
  from = 0,
): AsyncGenerator<Window> {
  let pinned = addr;
  let etag: string | undefined;
  let size = Infinity;
  let offset = from;
  for (;;) {
    // Never past the end once it is known: a range the store would shorten is not the quick GET's exact range.
    const want = Math.min(window, limit - (offset - from), size - offset);
    if (want <= 0) return;
    // Each window after the first from the same object (its version, its ETag): a replaced one fails, never mixes.
    const { meta, bytes } = await storage.readObjectHead(pinned, want, signal, offset, etag);
    if (meta.version_id && !pinned.versionId) pinned = { ...addr, versionId: meta.version_id };
    etag ??= meta.etag ?? undefined;
    size = meta.size;
    yield { meta, bytes, offset };
    offset += bytes.length;
    if (bytes.length === 0 || offset >= meta.size) return;
  }
}

/** Whether these first bytes start a gzip stream (a .gz file, or an object stored with Content-Encoding: gzip). */
export const isGzip = (head: Uint8Array) => head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;

/** Thrown when a gzip'd object inflates past its bound. */
export class InflatedTooLarge extends Error {}

/**
 * What a zlib stream (gunzip, raw inflate) makes of `chunks`, pulled: it makes no more than the reader takes, so a bomb
 * never fills memory; a reader that stops early ends it.
 */
export async function* pulled(stream: Transform, chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const feed = (async () => {
    for await (const c of chunks) {
      if (stream.destroyed) return;
      if (!stream.write(c)) await new Promise<void>((r) => (stream.once("drain", r), stream.once("close", r)));
    }
    stream.end();
  })().catch((e: Error) => stream.destroy(e));
  try {
    for await (const c of stream as AsyncIterable<Buffer>) yield c;
  } finally {
    stream.destroy();
    await feed;
  }
}

/** The decompressed bytes of a gzip stream (several gzip members, as `cat a.gz b.gz` makes, read as one), at most `maxInflated` of them. */
export async function* gunzipped(
  chunks: AsyncIterable<Uint8Array>,
  maxInflated: number,
  gunzip = createGunzip(),
): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const c of pulled(gunzip, chunks)) {
    total += c.length;
    if (total > maxInflated) throw new InflatedTooLarge(`more than ${maxInflated} bytes once decompressed`);
    yield c;
  }
}
