/** A store listing as a stream of objects, one page held at a time: the source of downloads, copies, usage and searches. */
import { itemPacer } from "../runtime/memory.ts";
import { type ObjectInfo, type Storage, stalledListing } from "../storage/index.ts";
import { type ObjectState, stateOf } from "./unchanged.ts";

const PAGE = 1000;
/** Keys listed between looks at the memory (memory.ts): a page's worth, however the pages come (many small folders make small pages). */
const KEYS_PER_LOOK = PAGE;

/** Every object under `prefix` after `startAfter`, in key order, one listing request after another. */
export async function* listFlat(
  storage: Storage,
  bucket: string,
  prefix: string,
  signal: AbortSignal,
  startAfter?: string,
  pace = itemPacer(KEYS_PER_LOOK),
): AsyncGenerator<ObjectInfo> {
  let token: string | undefined;
  let after = startAfter;
  for (;;) {
    const page = await storage.listObjects(
      { bucket, prefix, maxKeys: PAGE, ...(token ? { continuationToken: token } : after ? { startAfter: after } : {}) },
      signal,
    );
    for (const object of page.objects) {
      pace();
      yield object;
    }
    if (!page.is_truncated) return;
    const given = token;
    token = page.next_continuation_token ?? undefined;
    if (token && token === given) throw stalledListing(`s3://${bucket}/${prefix}`);
    if (token) continue;
    // A store that says "more" without a token: go on after the last key; one that does not move ends the scan as an error, never as complete.
    const last = page.objects.at(-1)?.key;
    if (last === undefined || last === after) throw stalledListing(`s3://${bucket}/${prefix}`);
    after = last;
  }
}

/** Folder listings run ahead of the one being read (each holds at most FEED_PAGES pages). */
const FEEDS_AHEAD = 8;
const FEED_PAGES = 2;
/** Objects of the top level read ahead while looking for the next folders. */
const TOP_AHEAD = 2000;
/**
 * Folders this small on average (after the first FEEDS_AHEAD) are not worth a
 * listing each: the rest is listed flat, in fewer requests.
 */
const SMALL_FOLDER_KEYS = 300;

/** S3 orders keys by their UTF-8 bytes, which JavaScript's < does not for every character. */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

type Entry = { object: ObjectInfo } | { folder: string };

/** The level below `prefix` (objects and folders, delimiter "/"), merged in key order; a folder stands for every key below it. */
async function* topLevel(
  storage: Storage,
  bucket: string,
  prefix: string,
  signal: AbortSignal,
  startAfter: string | undefined,
  pace: () => void,
): AsyncGenerator<Entry> {
  let token: string | undefined;
  let after = startAfter;
  for (;;) {
    const page = await storage.listObjects(
      {
        bucket,
        prefix,
        delimiter: "/",
        maxKeys: PAGE,
        ...(token ? { continuationToken: token } : after ? { startAfter: after } : {}),
      },
      signal,
    );
    const objects = page.objects;
    const folders = page.common_prefixes;
    for (let i = 0, j = 0; i < objects.length || j < folders.length; ) {
      pace();
      if (j >= folders.length || (i < objects.length && byteOrder(objects[i]!.key, folders[j]!) < 0))
        yield { object: objects[i++]! };
      else yield { folder: folders[j++]! };
    }
    if (!page.is_truncated) return;
    const given = token;
    token = page.next_continuation_token ?? undefined;
    if (token && token === given) throw stalledListing(`s3://${bucket}/${prefix}`);
    if (token) continue;
    const last = [objects.at(-1)?.key, folders.at(-1)]
      .filter((k): k is string => k !== undefined)
      .sort(byteOrder)
      .at(-1);
    if (last === undefined || last === after) throw stalledListing(`s3://${bucket}/${prefix}`);
    after = last;
  }
}

/** One folder listed ahead of its turn, at most FEED_PAGES pages held; read it once, in order. */
class FolderFeed {
  readonly #pages: ObjectInfo[][] = [];
  #done = false;
  #closed = false;
  #failure: { err: unknown } | undefined;
  #wake: (() => void) | undefined;
  #room: (() => void) | undefined;
  constructor(source: AsyncGenerator<ObjectInfo[]>) {
    void this.#fill(source);
  }
  /** The reader is gone: stop listing, hold nothing. */
  close(): void {
    this.#closed = true;
    this.#pages.length = 0;
    this.#room?.();
  }
  async #fill(source: AsyncGenerator<ObjectInfo[]>): Promise<void> {
    try {
      for await (const page of source) {
        if (this.#closed) break;
        this.#pages.push(page);
        this.#wake?.();
        while (this.#pages.length >= FEED_PAGES && !this.#closed)
          await new Promise<void>((room) => (this.#room = room));
      }
    } catch (err) {
      this.#failure = { err };
    } finally {
      this.#done = true;
      this.#wake?.();
    }
  }
  async *objects(): AsyncGenerator<ObjectInfo> {
    for (;;) {
      const page = this.#pages.shift();
      if (page) {
        this.#room?.();
        yield* page;
        continue;
      }
      if (this.#failure) throw this.#failure.err;
      if (this.#done) return;
      await new Promise<void>((wake) => (this.#wake = wake));
    }
  }
}

/** The pages of a flat listing (as listFlat, a page at a time). */
async function* pagesOf(
  storage: Storage,
  bucket: string,
  prefix: string,
  signal: AbortSignal,
  startAfter: string | undefined,
  pace: () => void,
): AsyncGenerator<ObjectInfo[]> {
  let page: ObjectInfo[] = [];
  for await (const object of listFlat(storage, bucket, prefix, signal, startAfter, pace)) {
    page.push(object);
    if (page.length >= PAGE) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

/**
 * Every object under `prefix` after `startAfter`, in key order, as listFlat
 * gives them but faster: a listing is one request after another (each page's
 * token comes from the one before), so the level below the prefix is listed
 * with delimiter "/" and up to FEEDS_AHEAD of its folders are listed at once,
 * ahead of their turn, and read in order. A flat prefix costs what listFlat
 * does; a store that ignores the delimiter just gives every key at the top;
 * once folders prove small, the rest goes flat.
 */
export async function* listAll(
  storage: Storage,
  bucket: string,
  prefix: string,
  signal: AbortSignal,
  startAfter?: string,
): AsyncGenerator<ObjectInfo> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  // One pace for every listing of the scan: collections go by what the whole scan holds.
  const pace = itemPacer(KEYS_PER_LOOK);
  const top = topLevel(storage, bucket, prefix, stop.signal, startAfter, pace);
  const ahead: (Entry & { feed?: FolderFeed })[] = [];
  let feeds = 0;
  let topDone = false;
  let reading: FolderFeed | undefined;
  let last = startAfter;
  let foldersRead = 0;
  let folderKeys = 0;
  const small = () => foldersRead >= FEEDS_AHEAD && folderKeys < foldersRead * SMALL_FOLDER_KEYS;
  // Resuming inside a folder: listed here first, after the key. Stores differ on whether a listing with a
  // delimiter that starts after a key names that key's folder (Ceph does not: the folder sorts before the key).
  const rest = startAfter?.startsWith(prefix) ? startAfter.slice(prefix.length) : undefined;
  const resumed = rest?.includes("/") ? prefix + rest.slice(0, rest.indexOf("/") + 1) : undefined;
  if (resumed) {
    ahead.push({
      folder: resumed,
      feed: new FolderFeed(pagesOf(storage, bucket, resumed, stop.signal, startAfter, pace)),
    });
    feeds++;
  }
  try {
    for (;;) {
      while (!topDone && !small() && feeds < FEEDS_AHEAD && ahead.length < TOP_AHEAD) {
        const next = await top.next();
        if (next.done) {
          topDone = true;
          break;
        }
        const entry: Entry & { feed?: FolderFeed } = next.value;
        if ("folder" in entry) {
          // The resumed folder is listed already; one wholly before the key (a store that sends it) is not listed again.
          if (entry.folder === resumed || (startAfter !== undefined && byteOrder(entry.folder, startAfter) < 0))
            continue;
          entry.feed = new FolderFeed(pagesOf(storage, bucket, entry.folder, stop.signal, undefined, pace));
          feeds++;
        } else if (startAfter !== undefined && byteOrder(entry.object.key, startAfter) <= 0) continue;
        ahead.push(entry);
      }
      const entry = ahead.shift();
      if (!entry) {
        // Small folders: what the top level has not given yet, in one flat listing after the last key read.
        if (!topDone) yield* listFlat(storage, bucket, prefix, stop.signal, last, pace);
        return;
      }
      if ("object" in entry) {
        last = entry.object.key;
        yield entry.object;
      } else {
        reading = entry.feed!;
        for await (const object of reading.objects()) {
          last = object.key;
          folderKeys++;
          yield object;
        }
        reading = undefined;
        feeds--;
        foldersRead++;
      }
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    // Folders still listing ahead stop with the reader.
    reading?.close();
    for (const entry of ahead) entry.feed?.close();
    stop.abort();
    await top.return(undefined);
  }
}

/** What a destination holds under a prefix, by the path below it: compared against, and what a mirror may delete. */
export async function indexPrefix(
  storage: Storage,
  bucket: string,
  prefix: string,
  signal: AbortSignal,
): Promise<Map<string, ObjectState>> {
  const index = new Map<string, ObjectState>();
  for await (const object of listAll(storage, bucket, prefix, signal))
    index.set(object.key.slice(prefix.length), stateOf(object));
  return index;
}

/** A folder prefix: "" stays "", anything else ends with one "/". */
export function folderPrefix(prefix: string | undefined): string {
  if (!prefix) return "";
  return prefix.endsWith("/") ? prefix : `${prefix}/`;
}
