/**
 * A query's private directory: created for one query (0700, in the temp
 * directory), holding the objects' bytes as the storage layer delivers them
 * (policy, allowlist and credentials applied to each), the engine's spill
 * files, and nothing else the engine may reach; removed when the query ends.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { type FileHandle, open, rename } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Slots } from "../../bulk/engine.ts";
import { type WrittenRanges, writePieces } from "../../local/pieces.ts";
import type { ObjectDownload, Storage } from "../../storage/index.ts";
import { isGzip } from "../windows.ts";
import { holdLock, LOCK_FILE } from "./dir-lock.ts";
import { placeSparseParquet, type SparseParquet } from "./parquet-ranges.ts";
import { fileNameFor, formatOfBytes, formatOfKey, type TableFile } from "./tables.ts";

/** Objects fetched at once: a small object's time is the store's time to answer, so many are in flight. */
const FETCH_AT_ONCE = 16;

export interface Workspace {
  dir: string;
  /** Where the objects' files go; the engine's spill files go beside it. */
  data: string;
  remove(): void;
}

export async function openWorkspace(): Promise<Workspace> {
  // Locked while it lives, and named by this process, so that a later server can tell what a killed one left behind
  // (leftovers.ts): by the lock, or for a directory without one, by the pid.
  // Locked before it takes the name a sweep looks for: no sweep ever sees it without its lock.
  const made = mkdtempSync(join(tmpdir(), `.store-mcp-query-new-${process.pid}-`));
  const release = await holdLock(join(made, LOCK_FILE)).catch(() => undefined);
  const dir = join(tmpdir(), `store-mcp-query-${process.pid}-${made.slice(made.lastIndexOf("-") + 1)}`);
  renameSync(made, dir);
  const data = join(dir, "data");
  mkdirSync(data, { mode: 0o700 });
  return {
    dir,
    data,
    remove: () => {
      rmSync(dir, { recursive: true, force: true });
      release?.();
    },
  };
}

export interface WantedObject {
  key: string;
  size: number;
  etag: string | null;
}

export interface Fetched {
  files: TableFile[];
  /** The Parquet objects placed as their footers only: the engine's plan says which columns to fetch (parquet-ranges.ts). */
  sparse: SparseParquet[];
}

/**
 * Fetches each object into the workspace (FETCH_AT_ONCE at a time): a Parquet object (by its name) as its footer in a
 * sparse file, anything else whole, checked as a download is; `fetched` hears each one's bytes.
 */
export async function fetchObjects(
  storage: Storage,
  bucket: string,
  objects: readonly WantedObject[],
  ws: Workspace,
  signal: AbortSignal,
  fetched: (bytes: number) => void,
): Promise<Fetched> {
  const slots = new Slots(FETCH_AT_ONCE);
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  const sparse: SparseParquet[] = [];
  try {
    const files = await Promise.all(
      objects.map((object, i) =>
        slots
          .use(async () => {
            stop.signal.throwIfAborted();
            if (formatOfKey(object.key) === "parquet") {
              const path = join(ws.data, fileNameFor(i + 1, "parquet", false));
              const placed = await placeSparseParquet(storage, bucket, object.key, path, stop.signal);
              if (placed) {
                sparse.push(placed);
                fetched(placed.source.counts.bytes);
                return { key: object.key, path, format: "parquet" as const };
              }
            }
            const file = await fetchOne(storage, bucket, object, ws.data, i + 1, stop.signal);
            fetched(file.bytes);
            return file.table;
          })
          .catch((err) => {
            stop.abort(err);
            throw err;
          }),
      ),
    );
    return { files, sparse };
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** The object's download, pinned to the ETag and size it was listed with (when it was). */
export const openWanted = (storage: Storage, bucket: string, object: WantedObject, signal: AbortSignal) =>
  storage.openObjectDownload(
    { bucket, key: object.key },
    signal,
    object.etag ? { listed: { size: object.size, etag: object.etag } } : {},
  );

/** Writes `download` into `handle`, checked as a download is (no SHA-256 of its own); `ranges` hears each piece. */
export const writeDownload = (
  handle: FileHandle,
  download: ObjectDownload,
  signal: AbortSignal,
  ranges?: WrittenRanges,
) =>
  writePieces(
    handle,
    {
      size: download.size,
      fill: (write) => download.deliver(write),
      ...(download.check ? { check: download.check } : {}),
    },
    signal,
    false,
    ranges,
  );

async function fetchOne(
  storage: Storage,
  bucket: string,
  object: WantedObject,
  dir: string,
  position: number,
  signal: AbortSignal,
): Promise<{ table: TableFile; bytes: number }> {
  const download = await openWanted(storage, bucket, object, signal);
  const part = join(dir, `${position}.part`);
  const handle = await open(part, "wx+", 0o600);
  let head = new Uint8Array(0);
  try {
    const written = await writeDownload(handle, download, signal);
    const got = await handle.read(Buffer.alloc(64), 0, 64, 0);
    head = got.buffer.subarray(0, got.bytesRead);
    // The stored bytes: gzip'd text is told by its magic bytes, whatever its name or Content-Encoding.
    const gzip = isGzip(head);
    const named = formatOfKey(object.key);
    const format = named ?? (gzip ? "csv" : formatOfBytes(head));
    const path = join(dir, fileNameFor(position, format, gzip));
    await rename(part, path);
    return { table: { key: object.key, path, format, byContent: named === undefined }, bytes: written.bytes };
  } finally {
    await handle.close();
    download.discard();
  }
}
