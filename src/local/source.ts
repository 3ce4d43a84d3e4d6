import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { ActionableError } from "../errors.ts";
import type { CheckedPath } from "./sandbox.ts";

export interface UploadSource {
  size: number;
  /** Reads at `position` into `into`; returns the bytes read, 0 at the end. Read errors name the given path. */
  readAt(into: Uint8Array, position: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * Opens a checked path for reading at offsets (each upload part reads its own
 * range). O_NOFOLLOW refuses a symlink swapped in after the check, and the
 * opened descriptor itself must be a regular file.
 */
export async function openUploadSource(file: CheckedPath): Promise<UploadSource> {
  let handle: FileHandle;
  try {
    handle = await open(file.path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    throw localError(file.given, err, "read");
  }
  const stat = await handle.stat().catch(async (err: unknown) => {
    await handle.close().catch(() => {});
    throw localError(file.given, err, "read");
  });
  if (!stat.isFile()) {
    await handle.close().catch(() => {});
    throw new ActionableError({
      resource: file.given,
      code: stat.isDirectory() ? "LocalPathIsDirectory" : "NotARegularFile",
      message: stat.isDirectory() ? "The path is a directory; upload_file uploads one file." : "The path is not a regular file.",
      hint: "give the path of one regular file (list the directory's files yourself and upload them one by one).",
    });
  }
  let closed: Promise<void> | undefined;
  return {
    size: stat.size,
    readAt: async (into, position) => {
      try {
        return (await handle.read(into, 0, into.length, position)).bytesRead;
      } catch (err) {
        throw localError(file.given, err, "read");
      }
    },
    close: () => (closed ??= handle.close().catch(() => {})),
  };
}

/** A filesystem error as an ActionableError about `given`. */
export function localError(given: string, err: unknown, doing: "read" | "write"): ActionableError {
  if (err instanceof ActionableError) return err;
  const code = (err as NodeJS.ErrnoException).code ?? "";
  const table: Record<string, [string, string, string]> = {
    ENOENT: ["LocalFileNotFound", "No file exists at this path.", "check the path."],
    ELOOP: ["LocalSymlinkRefused", "The path is a symlink; it is not followed.", "give the path of the real file."],
    EACCES: ["LocalAccessDenied", `The server is not permitted to ${doing} this path.`, "choose another path."],
    EPERM: ["LocalAccessDenied", `The server is not permitted to ${doing} this path.`, "choose another path."],
    EISDIR: ["LocalPathIsDirectory", "The path is a directory.", "give a file path."],
    ENOTDIR: ["InvalidLocalPath", "A part of the path is a file, not a directory.", "check the path."],
    ENOSPC: ["LocalDiskFull", "The disk is full; nothing was written.", "free space or choose another local_path."],
    EDQUOT: ["LocalDiskFull", "The disk quota is exhausted; nothing was written.", "free space or choose another local_path."],
    EROFS: ["LocalAccessDenied", "The file system is read-only.", "choose another local_path."],
    ENAMETOOLONG: ["InvalidLocalPath", "The path is too long.", "use a shorter path."],
  };
  const [c, message, hint] = table[code] ?? ["LocalIOError", `The file could not be ${doing === "read" ? "read" : "written"} (${code || "unknown error"}).`, "check the path and retry."];
  return new ActionableError({ resource: given, code: c, message, hint });
}
