/** The local-files layer: the only code that touches the local filesystem for tools. */
import { existsError, writeFileAtomically, type WriteResult } from "./download.ts";
import { checkExistingPath, checkTargetPath, type AllowedDirs, type CheckedPath } from "./sandbox.ts";
import { openUploadSource, type UploadSource } from "./source.ts";

export type { AllowedDirs, CheckedPath, UploadSource, WriteResult };

export interface LocalFiles {
  /** Checks `given` against the allowed directories and opens it for streaming. */
  openForUpload(given: string): Promise<UploadSource & { path: string }>;
  /** Checks a download target; refuses an existing file unless `overwrite`. */
  checkDownloadTarget(given: string, overwrite: boolean): Promise<CheckedPath>;
  /** Streams into a checked target atomically; computes sha256 on the way. */
  writeDownload(target: CheckedPath, chunks: AsyncIterable<Uint8Array>, opts: { overwrite: boolean; signal?: AbortSignal }): Promise<WriteResult>;
}

/** `allowed` is read on every call: client roots can change during a session. */
export function createLocalFiles(allowed: () => Promise<AllowedDirs>): LocalFiles {
  return {
    async openForUpload(given) {
      const checked = await checkExistingPath(given, await allowed());
      return { ...(await openUploadSource(checked)), path: checked.path };
    },
    async checkDownloadTarget(given, overwrite) {
      const checked = await checkTargetPath(given, await allowed());
      if (checked.exists && !overwrite) throw existsError(given);
      return checked;
    },
    writeDownload: writeFileAtomically,
  };
}
