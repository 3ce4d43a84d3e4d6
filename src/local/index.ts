/** The local-files layer: the only code that touches the local filesystem for tools. */
import type { KeptTransfers } from "../runtime/kept-transfers.ts";
import { platformMode } from "./beneath.ts";
import { type DestinationHolder, destinationBusy } from "./destinations.ts";
import { existsError, type WriteOptions, type WriteResult, writeFileAtomically } from "./download.ts";
import { HeldDirs } from "./held-dirs.ts";
import type { PieceSource } from "./pieces.ts";
import { type AllowedDirs, type CheckedPath, checkTargetPath, type WalkMode } from "./sandbox.ts";
import { openUploadSource, type UploadSource } from "./source.ts";
import { checkDirectory, type LocalFileState, removeLocalFile, walkTree, withLocalFile } from "./tree.ts";
import type { WalkEvents, WalkedFile, WalkSkip } from "./walk.ts";

export type {
  AllowedDirs,
  CheckedPath,
  LocalFileState,
  PieceSource,
  UploadSource,
  WalkEvents,
  WalkedFile,
  WalkSkip,
  WriteResult,
};

export interface LocalFiles {
  /** Checks `given` against the allowed directories and opens it for streaming. */
  openForUpload(given: string): Promise<UploadSource>;
  /** Checks a download target; refuses an existing file unless `overwrite`, and one another running download writes. */
  checkDownloadTarget(given: string, overwrite: boolean, asker?: DestinationHolder): Promise<CheckedPath>;
  /** Writes the pieces into the target atomically, checking the whole path again as it goes; computes sha256 on the way. */
  writeDownload(target: CheckedPath, source: PieceSource, opts: WriteOptions): Promise<WriteResult>;
  /** The regular files below a directory, each opened as the walk reaches it (the taker closes it); a missing directory is an error, or with `missingOk` an empty walk. */
  walk(given: string, events: WalkEvents, missingOk?: boolean): AsyncGenerator<WalkedFile>;
  /** Whether a directory exists at `given` (refused outside the allowed directories), and its real path. */
  checkDirectory(given: string): Promise<{ exists: boolean; path: string }>;
  /** Opens the file at `given` to compare it (size, mtime, MD5); `use` gets undefined when nothing is there. */
  withFile<T>(given: string, use: (state: LocalFileState | undefined) => Promise<T>): Promise<T>;
  /** Removes one regular file (a mirror's extraneous file). */
  remove(given: string): Promise<void>;
  /**
   * The same files for paths made from store keys below a directory's real path (download_prefix, a mirror's deletes):
   * a symlink anywhere on such a path is refused (UnsafeLocalPath), even one that stays inside, so a key `link/x`
   * never writes through `link -> ../other`. A path the user gave keeps the rules above. Its folders are held across
   * its files, each checked at every use (held-dirs.ts), until `release()`: one job's, released when it ends.
   */
  forStoreKeys(): LocalFiles;
  /** Lets go of the folders held (forStoreKeys); nothing for the others. */
  release(): void;
}

/** `allowed` is read on every call: client roots can change during a session. */
/** `kept`: where a cut download's temp file is recorded to resume (none: a cut download is cleaned up). */
export function createLocalFiles(
  allowed: () => Promise<AllowedDirs>,
  mode: WalkMode = platformMode(),
  kept?: KeptTransfers,
): LocalFiles {
  return {
    forStoreKeys: () => {
      const held = new HeldDirs();
      const files = createLocalFiles(async () => ({ ...(await allowed()), noLinks: true, held }), mode, kept);
      return { ...files, release: () => held.release() };
    },
    release() {},
    async openForUpload(given) {
      return openUploadSource(given, await allowed(), mode);
    },
    async checkDownloadTarget(given, overwrite, asker) {
      const checked = await checkTargetPath(given, await allowed(), mode);
      // Before the exists check: a running download's target may not exist yet, or already (it replaces it).
      const busy = destinationBusy(checked.path, given, asker);
      if (busy) throw busy;
      if (checked.exists && !overwrite) throw existsError(given);
      return checked;
    },
    async writeDownload(target, source, opts) {
      return writeFileAtomically(target.given, await allowed(), mode, source, opts, kept);
    },
    async *walk(given, events, missingOk) {
      yield* walkTree(given, await allowed(), mode, events, missingOk);
    },
    async checkDirectory(given) {
      return checkDirectory(given, await allowed(), mode);
    },
    async withFile(given, use) {
      return withLocalFile(given, await allowed(), mode, use);
    },
    async remove(given) {
      removeLocalFile(given, await allowed(), mode);
    },
  };
}
