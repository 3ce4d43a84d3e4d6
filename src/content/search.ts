/**
 * search_objects' engine: the objects under a prefix searched line by line,
 * SEARCH_AT_ONCE at a time, each read once in order (windows.ts), results
 * taken in key order so a search that stops (enough matches, or the answer's
 * size) can resume at exactly the next line. Binary objects (a NUL in their
 * first 8 KiB, as grep judges) and objects over the size bound are skipped
 * and counted; gzip'd ones are searched decompressed.
 */
import { releaseChunks } from "../runtime/memory.ts";
import type { ObjectInfo, Storage } from "../storage/index.ts";
import { type LineMatch, LineSearch } from "./line-search.ts";
import { gunzipped, InflatedTooLarge, isGzip, type Window, windowsOf } from "./windows.ts";

/**
 * Objects read at once. A small object is one GET, and a search of many is bound by the store's time to answer, not
 * by bytes or CPU: many overlap (BENCH_ONLY=look), within SMALL_BYTES_AT_ONCE of their bytes. Larger objects are read window by window, LARGE_AT_ONCE at a time.
 */
export const SEARCH_AT_ONCE = 128;
export const SMALL_BYTES_AT_ONCE = 16 * 1024 * 1024;
export const LARGE_AT_ONCE = 4;
/** One GET's bytes; the next window is asked for while this one is searched. */
export const SEARCH_WINDOW = 1024 * 1024;
/** A gzip'd object may inflate to this many times its size bound. */
const INFLATE_RATIO = 20;
const BINARY_SNIFF = 8 * 1024;

export interface ObjectSearch {
  storage: Storage;
  bucket: string;
  find: (text: string, from: number) => number;
  context: number;
  maxObjectBytes: number;
  signal: AbortSignal;
  /** Told the bytes searched (runtime/memory.ts memoryPacer): a search's garbage is text, which nothing frees sooner. */
  pace?: (bytes: number) => void;
}

export type ObjectOutcome =
  | {
      key: string;
      kind: "searched";
      matches: LineMatch[];
      matchingLines: number;
      bytes: number;
      full: boolean;
      lastLine?: number;
    }
  | { key: string; kind: "binary" | "too_large" | "gone"; bytes: number };

/** Searches one object, reporting at most `max` matches after line `afterLine`. */
export async function searchObject(
  o: ObjectSearch,
  object: Pick<ObjectInfo, "key" | "size"> & { etag?: string | null },
  max: number,
  afterLine = 0,
): Promise<ObjectOutcome> {
  const { key } = object;
  if (object.size > o.maxObjectBytes) return { key, kind: "too_large", bytes: 0 };
  const search = new LineSearch({ find: o.find, context: o.context, after: afterLine, max });
  let bytes = 0;
  const stop = new AbortController();
  const onAbort = () => stop.abort(o.signal.reason);
  o.signal.addEventListener("abort", onAbort, { once: true });
  try {
    // A small listed object comes whole with one quick GET pinned to its listed ETag (as download_prefix fetches it):
    // the SDK's GetObject would cost most of a small object's search in CPU. Larger ones come window by window.
    const raw =
      object.etag && object.size <= SMALL_OBJECT_BYTES
        ? whole(o, { key, size: object.size, etag: object.etag }, stop.signal)
        : prefetched(windowsOf(o.storage, { bucket: o.bucket, key }, stop.signal, SEARCH_WINDOW, o.maxObjectBytes + 1));
    const first = await raw.next();
    if (first.done) return { key, kind: "searched", matches: [], matchingLines: 0, bytes: 0, full: false };
    if (first.value.meta.size > o.maxObjectBytes) return { key, kind: "too_large", bytes: 0 };
    // Each window's buffer is ours alone (readObjectHead copies the body into it): freed as soon as it is searched as
    // text (decoding is done when the next is asked for; an inflater may still hold it then, so gzip'd ones are left).
    const gzip = isGzip(first.value.bytes);
    const stored = (async function* () {
      yield first.value.bytes;
      if (!gzip) releaseChunks([first.value.bytes]);
      for await (const w of raw) {
        yield w.bytes;
        if (!gzip) releaseChunks([w.bytes]);
      }
    })();
    const counted = (async function* () {
      for await (const b of stored) {
        bytes += b.length;
        yield b;
      }
    })();
    const text = gzip ? gunzipped(counted, o.maxObjectBytes * INFLATE_RATIO) : counted;
    const decoder = new TextDecoder("utf-8");
    let sniffed = false;
    for await (const chunk of text) {
      if (!sniffed) {
        sniffed = true;
        if (chunk.subarray(0, BINARY_SNIFF).includes(0)) return { key, kind: "binary", bytes };
      }
      search.push(decoder.decode(chunk, { stream: true }));
      o.pace?.(chunk.length);
      if (search.full) break;
    }
    if (!search.full) {
      search.push(decoder.decode());
      search.end();
    }
    return {
      key,
      kind: "searched",
      matches: search.matches,
      matchingLines: search.matchingLines,
      bytes,
      full: search.full,
      ...(search.full ? { lastLine: search.lastReported! } : {}),
    };
  } catch (err) {
    if (err instanceof InflatedTooLarge) return { key, kind: "too_large", bytes };
    // Deleted since it was listed.
    if ((err as { code?: string }).code === "NoSuchKey") return { key, kind: "gone", bytes };
    throw err;
  } finally {
    o.signal.removeEventListener("abort", onAbort);
    stop.abort();
  }
}

/** Objects up to this size are fetched whole, with one request. */
export const SMALL_OBJECT_BYTES = 1024 * 1024;

/** A small object's bytes as one window. */
async function* whole(
  o: ObjectSearch,
  object: { key: string; size: number; etag: string },
  signal: AbortSignal,
): AsyncGenerator<Window> {
  const download = await o.storage.openObjectDownload({ bucket: o.bucket, key: object.key }, signal, {
    listed: { size: object.size, etag: object.etag },
  });
  try {
    // Whole in memory already (the quick GET's body): taken as it is. Else delivered, the chunks released once the
    // sink returns: copied into place at once.
    const bytes = download.bytes ?? new Uint8Array(download.size ?? object.size);
    if (!download.bytes)
      await download.deliver(async (offset, chunks) => {
        for (const c of chunks)
          bytes.set(c.subarray(0, Math.max(0, bytes.length - offset)), offset), (offset += c.length);
      });
    download.check?.update(bytes);
    download.check?.finish();
    yield { meta: download.meta, bytes, offset: 0 };
  } finally {
    download.discard();
  }
}

/** The same items, each asked for while the one before is being used. */
async function* prefetched<T>(source: AsyncGenerator<T>): AsyncGenerator<T> {
  let next = source.next();
  try {
    for (;;) {
      const got = await next;
      if (got.done) return;
      next = source.next();
      yield got.value;
    }
  } finally {
    // A window asked for and not wanted: its failure is nobody's.
    next.catch(() => {});
    await source.return(undefined).catch(() => {});
  }
}
