/**
 * Reading an object's bytes in order, window by window: each window one
 * ranged GET through the storage layer (so the caller's policy, the bucket
 * allowlist and the store's credentials apply to every byte), the later ones
 * pinned to the first answer's version where the store keeps versions. A
 * gzip'd object (a .gz key, or the gzip magic at its start — what a
 * `Content-Encoding: gzip` object holds) can be read through its
 * decompression, bounded: a bomb stops at `maxInflated`.
 */
import { createGunzip } from "node:zlib";
import type { ObjectAddress, ObjectMeta, Storage } from "../storage/index.ts";

/** What one window read hands back: the object's facts and these bytes. */
export interface Window {
  meta: ObjectMeta;
  bytes: Uint8Array;
  offset: number;
}

/** The object's bytes from `from` on, `window` bytes per GET, until its end or `limit` bytes. */
export async function* windowsOf(storage: Storage, addr: ObjectAddress, signal: AbortSignal, window: number, limit = Infinity, from = 0): AsyncGenerator<Window> {
  let pinned = addr;
  let offset = from;
  for (;;) {
    const want = Math.min(window, limit - (offset - from));
    if (want <= 0) return;
    const { meta, bytes } = await storage.readObjectHead(pinned, want, signal, offset);
    if (meta.version_id && !pinned.versionId) pinned = { ...addr, versionId: meta.version_id };
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
 * The decompressed bytes of a gzip stream given in chunks (several gzip members, as `cat a.gz b.gz` makes, read as one),
 * at most `maxInflated` of them. Pulled: the inflater makes no more than the reader takes (a bomb never fills memory).
 */
export async function* gunzipped(chunks: AsyncIterable<Uint8Array>, maxInflated: number): AsyncGenerator<Uint8Array> {
  const gunzip = createGunzip();
  const feed = (async () => {
    for await (const c of chunks) {
      if (gunzip.destroyed) return;
      if (!gunzip.write(c)) await new Promise<void>((r) => (gunzip.once("drain", r), gunzip.once("close", r)));
    }
    gunzip.end();
  })().catch((e: Error) => gunzip.destroy(e));
  let total = 0;
  try {
    for await (const c of gunzip as AsyncIterable<Buffer>) {
      total += c.length;
      if (total > maxInflated) throw new InflatedTooLarge(`more than ${maxInflated} bytes once decompressed`);
      yield c;
    }
  } finally {
    gunzip.destroy();
    await feed;
  }
}
