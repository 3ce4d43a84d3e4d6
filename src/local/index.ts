/** The local-files layer: the only code that touches the local filesystem for tools. */
import { existsError, writeFileAtomically, type WriteOptions, type WriteResult } from "./download.ts";
import { checkTargetPath, type AllowedDirs, type CheckedPath, type WalkMode } from "./sandbox.ts";
import { platformMode } from "./beneath.ts";
import { openUploadSource, type UploadSource } from "./source.ts";
import type { PieceSource } from "./pieces.ts";

export type { AllowedDirs, CheckedPath, PieceSource, UploadSource, WriteResult };

export interface LocalFiles {
  /** Checks `given` against the allowed directories and opens it for streaming. */
  openForUpload(given: string): Promise<UploadSource>;
  /** Checks a download target; refuses an existing file unless `overwrite`. */
  checkDownloadTarget(given: string, overwrite: boolean): Promise<CheckedPath>;
  /** Writes the pieces into the target atomically, checking the whole path again as it goes; computes sha256 on the way. */
  writeDownload(target: CheckedPath, source: PieceSource, opts: WriteOptions): Promise<WriteResult>;
}

/** `allowed` is read on every call: client roots can change during a session. */
export function createLocalFiles(allowed: () => Promise<AllowedDirs>, mode: WalkMode = platformMode()): LocalFiles {
  return {
    async openForUpload(given) {
      return openUploadSource(given, await allowed(), mode);
    },
    async checkDownloadTarget(given, overwrite) {
      const checked = await checkTargetPath(given, await allowed(), mode);
      if (checked.exists && !overwrite) throw existsError(given);
      return checked;
    },
    async writeDownload(target, source, opts) {
      return writeFileAtomically(target.given, await allowed(), mode, source, opts);
    },
  };
}
