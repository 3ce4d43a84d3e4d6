/**
 * A download's temp file, kept when the download is cut so the next call for
 * the same object and target continues it (docs/reliability.md). The temp
 * file is the hidden `.name.<random>.partial` beside the target, as always;
 * with a state directory its object (store, bucket, key, version, ETag, size)
 * and the byte ranges written into it are recorded (runtime/kept-transfers.ts:
 * every running download's together, once a second, and once more at the cut). The next call
 * reopens it only when the object's first answer shows the same ETag and
 * size, and fetches only the ranges it lacks; anything else removes it and
 * starts over, so old and new bytes never mix. The whole file is hashed
 * (sha256, the ETag's MD5, checksums) as before, the kept ranges read back.
 * A temp file kept past 24 h is removed by the next download that sees its record.
 */
import { constants, unlinkSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type DownloadResume, KEEP_MS, type KeptDownload, type KeptTransfers } from "../runtime/kept-transfers.ts";
import { keepsOnStop } from "../runtime/stop-reason.ts";
import { type Dir, entryStat } from "./beneath.ts";

// Read and write: pieces written out of order are read back to hash the file in order (pieces.ts).
const O_CREATE = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
const O_REOPEN = constants.O_RDWR | (constants.O_NOFOLLOW ?? 0);
/** Only names we make are ever removed for an expired record. */
const TEMP_NAME = /^\..*\.[0-9a-f]{12}\.partial$/;

export interface TempSlot {
  handle: FileHandle;
  /** The temp file's name in the target's directory. */
  temp: string;
  /** Ranges [start, end) already in the file (a resumed download), sorted and apart. */
  have: [number, number][];
  /** Told of every piece written. */
  written(offset: number, length: number): void;
  /**
   * The download ended: a cut keeps the file and its record when there is a record to keep; anything else forgets
   * the record. Returns whether the file is kept (else the caller removes it, unless it moved it into place).
   */
  end(cut: boolean): boolean;
}

/**
 * The temp file for `name` in `dir`: the kept one of a cut download of the
 * same object, reopened, or a new one. `kept` undefined or a source that
 * cannot resume: a new one, nothing recorded.
 */
export async function openTemp(
  dir: Dir,
  name: string,
  tempName: () => string,
  resume: DownloadResume | undefined,
  kept: KeptTransfers | undefined,
): Promise<TempSlot> {
  const target = join(dir.real, name);
  const recording = kept?.enabled && resume ? kept : undefined;
  if (kept?.enabled) sweepExpired(kept, dir);
  const record = kept?.enabled ? kept.download(target) : undefined;
  let reopened: { handle: FileHandle; temp: string; have: [number, number][] } | undefined;
  if (record && recording && resume && sameObject(record, resume)) reopened = await reopen(dir, record, resume);
  if (record && !reopened) {
    // Another object, another size, or a file that is not what was recorded: start over.
    if (dirname(record.temp) === dir.real && TEMP_NAME.test(basename(record.temp)))
      removeQuietly(dir, basename(record.temp));
    kept!.dropDownload(target, record.temp);
  }
  const temp = reopened?.temp ?? tempName();
  const handle = reopened?.handle ?? (await open(dir.at(temp), O_CREATE, 0o644));
  const have = reopened?.have ?? [];
  if (!recording || !resume) return { handle, temp, have, written: () => {}, end: () => false };

  const ranges = have.map(([s, e]): [number, number] => [s, e]);
  const createdAt = reopened ? record!.created_at : Date.now();
  const current = () => ({
    ...resume.identity,
    target,
    temp: join(dir.real, temp),
    have: ranges,
    created_at: createdAt,
  });
  // Recorded before any byte: a process killed from here on leaves a file the next call knows. Not recorded (a state
  // directory that cannot be written): nothing is kept, a cut removes the file as before.
  if (!recording.keepDownload(current())) return { handle, temp, have, written: () => {}, end: () => false };
  return {
    handle,
    temp,
    have,
    written(offset, length) {
      // The first range is fetched again on every try: only what comes after it is worth recording.
      if (offset < resume.from) return;
      addRange(ranges, offset, offset + length);
      recording.noteDownload(target, current);
    },
    end(cut) {
      if (cut) recording.keepDownload(current());
      else recording.dropDownload(target, join(dir.real, temp));
      return cut;
    },
  };
}

/** Whether a download stopped by `signal` is a cut that keeps its temp file. */
export function isCut(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && keepsOnStop(signal.reason);
}

function sameObject(record: KeptDownload, resume: DownloadResume): boolean {
  const id = resume.identity;
  return (
    record.store === id.store &&
    record.bucket === id.bucket &&
    record.key === id.key &&
    (record.version_id ?? "") === (id.version_id ?? "") &&
    record.etag === id.etag &&
    record.size === id.size &&
    Date.now() - record.created_at <= KEEP_MS
  );
}

/** The recorded temp file, if it is still a regular file of ours in this directory holding what the record says. */
async function reopen(
  dir: Dir,
  record: KeptDownload,
  resume: DownloadResume,
): Promise<{ handle: FileHandle; temp: string; have: [number, number][] } | undefined> {
  const temp = basename(record.temp);
  if (dirname(record.temp) !== dir.real || !TEMP_NAME.test(temp)) return undefined;
  const st = entryStat(dir, temp);
  if (!st?.isFile() || st.nlink !== 1) return undefined;
  const have = record.have.filter(
    ([s, e]) =>
      Number.isSafeInteger(s) && Number.isSafeInteger(e) && s >= resume.from && s < e && e <= resume.identity.size,
  );
  if (have.some(([, e]) => e > st.size)) return undefined;
  const handle = await open(dir.at(temp), O_REOPEN).catch(() => undefined);
  if (!handle) return undefined;
  const opened = await handle.stat();
  if (!opened.isFile() || opened.ino !== st.ino) {
    await handle.close();
    return undefined;
  }
  return { handle, temp, have: normalized(have) };
}

/** Folders held across a job whose expired records were removed: a bulk download's thousands of files ask once a folder. */
const swept = new WeakSet<object>();

/** Removes the expired records of `dir` and their temp files: at each download, but once a job for a folder it holds. */
function sweepExpired(kept: KeptTransfers, dir: Dir): void {
  if (dir.heldFor) {
    if (swept.has(dir.heldFor)) return;
    swept.add(dir.heldFor);
  }
  removeExpired(kept, dir);
}

/**
 * Removes the temp files of records kept past 24 h in the directory of this download (only names we make, through
 * the directory already opened and checked) and forgets them. A record of another directory waits for a download
 * there: a record is never a reason to touch a path this call was not given.
 */
function removeExpired(kept: KeptTransfers, dir: Dir): void {
  for (const record of kept.expired().downloads) {
    if (dirname(record.temp) !== dir.real) continue;
    const name = basename(record.temp);
    if (TEMP_NAME.test(name)) removeQuietly(dir, name);
    kept.dropDownload(record.target, record.temp);
  }
}

/** Removes `name` from `dir` if it is there (gone already, or its directory swapped in path mode: never elsewhere). */
export function removeQuietly(dir: Dir, name: string): void {
  try {
    unlinkSync(dir.at(name));
  } catch {
    // Already gone, or the directory was swapped (path mode): never unlink elsewhere.
  }
}

/** Sorted, apart ranges. */
function normalized(ranges: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [s, e] of [...ranges].sort((a, b) => a[0] - b[0])) addRange(out, s, e);
  return out;
}

/** Adds [start, end) to sorted, apart `ranges`, merging what touches it. */
export function addRange(ranges: [number, number][], start: number, end: number): void {
  let i = 0;
  while (i < ranges.length && ranges[i]![1] < start) i++;
  let j = i;
  while (j < ranges.length && ranges[j]![0] <= end) {
    start = Math.min(start, ranges[j]![0]);
    end = Math.max(end, ranges[j]![1]);
    j++;
  }
  ranges.splice(i, j - i, [start, end]);
}
