import { randomBytes } from "node:crypto";
import { futimesSync, linkSync, renameSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { ActionableError } from "../runtime/errors.ts";
import type { KeptTransfers } from "../runtime/kept-transfers.ts";
import { type Dir, entryStat } from "./beneath.ts";
import { claimDestination, type DestinationHolder } from "./destinations.ts";
import { localError } from "./errors.ts";
import { isCut, openTemp, removeQuietly } from "./kept-download.ts";
import { type PieceSource, writePieces } from "./pieces.ts";
import { type AllowedDirs, type WalkMode, withTargetParent } from "./sandbox.ts";

/** Bytes of the target's name kept in the temp name, so it fits NAME_MAX (255) with room to spare. */
const TEMP_NAME_PREFIX_BYTES = 100;

export interface WriteOptions {
  overwrite: boolean;
  signal?: AbortSignal;
  /** The file's modification time (a bulk download gives it the object's, so an unchanged file is known again). */
  mtime?: Date;
  /** Compute the file's sha256 (default true; a bulk download's result has no room for one per file). */
  sha256?: boolean;
  /** Who writes it, to name in the refusal of a second transfer to the same path (destinations.ts). */
  holder?: DestinationHolder;
}

export interface WriteResult {
  bytes: number;
  sha256: string;
  /** The real path written. */
  path: string;
}

/** `.name.<random>.partial`, with the name cut to whole UTF-8 characters within 100 bytes. */
export function tempNameFor(name: string): string {
  let prefix = "";
  let bytes = 0;
  for (const char of name) {
    bytes += Buffer.byteLength(char, "utf8");
    if (bytes > TEMP_NAME_PREFIX_BYTES) break;
    prefix += char;
  }
  return `.${prefix}.${randomBytes(6).toString("hex")}.partial`;
}

/**
 * Writes `source`'s pieces into a temp file created exclusively in the target's
 * directory (held open, see beneath.ts), then moves it into place within that
 * same directory: rename when overwriting (a symlink is replaced, never
 * followed), link when not (fails if the file appeared meanwhile). On any
 * failure the temp file is removed from that directory and the target is
 * untouched; but a cut (the call cancelled, the server stopping) of a source
 * that can resume, with `kept`, keeps the temp file and records it, and the
 * next call continues it (kept-download.ts).
 */
export async function writeFileAtomically(
  given: string,
  allowed: AllowedDirs,
  mode: WalkMode,
  source: PieceSource,
  opts: WriteOptions,
  kept?: KeptTransfers,
): Promise<WriteResult> {
  return withTargetParent(given, allowed, mode, async (parent, exists) => {
    if (exists && !opts.overwrite) throw existsError(given);
    const { dir, name } = parent;
    const release = claimDestination(join(dir.real, name), given, opts.holder);
    let slot: Awaited<ReturnType<typeof openTemp>>;
    try {
      slot = await openTemp(dir, name, () => tempNameFor(name), source.resume, kept);
    } catch (err) {
      release();
      throw err;
    }
    const { temp } = slot;
    let handle: FileHandle | undefined = slot.handle;
    let moved = false;
    let cut = false;
    try {
      const written = await writePieces(handle, source, opts.signal, opts.sha256 ?? true, slot);
      // On this thread: a quick call on the open descriptor, where the handle's own went through the thread pool and
      // back (a bulk download's every file).
      if (opts.mtime) futimesSync(handle.fd, opts.mtime, opts.mtime);
      await handle.close();
      handle = undefined;
      moveIntoPlace(dir, temp, name, given, opts.overwrite);
      moved = true;
      return { ...written, path: join(dir.real, name) };
    } catch (err) {
      cut = isCut(opts.signal);
      throw localError(given, err, "write");
    } finally {
      await handle?.close().catch(() => {});
      const kept = slot.end(cut && !moved);
      if (!moved && !kept) removeQuietly(dir, temp);
      release();
    }
  });
}

function moveIntoPlace(dir: Dir, temp: string, name: string, given: string, overwrite: boolean): void {
  if (overwrite) {
    renameSync(dir.at(temp), dir.at(name));
    return;
  }
  try {
    // link() never replaces: EEXIST if something is at the target by now.
    linkSync(dir.at(temp), dir.at(name));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw existsError(given);
    // File systems without hard links: check, then rename (a narrow race remains there).
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "EMLINK") {
      if (entryStat(dir, name)) throw existsError(given);
      renameSync(dir.at(temp), dir.at(name));
      return;
    }
    throw err;
  }
  removeQuietly(dir, temp);
}

export function existsError(given: string): ActionableError {
  return new ActionableError({
    resource: given,
    code: "LocalFileExists",
    message: "A file already exists at local_path; it was left untouched.",
    hint: "call again with overwrite: true to replace it, or choose another local_path.",
  });
}
