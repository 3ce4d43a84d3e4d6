/**
 * Opening an existing local file for reading (an upload's source, a file a
 * bulk job compares with an object), through the walk of sandbox.ts.
 */
import { constants, readlinkSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import { entryStat, followLink, linkOnPath, platformMode, refuse } from "./beneath.ts";
import {
  type AllowedDirs,
  type CheckedPath,
  lexicalCheck,
  MAX_SYMLINK_HOPS,
  scopeOf,
  type WalkMode,
  withParent,
} from "./sandbox.ts";

const O_READ = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

function notRegular(given: string, kind: "directory" | "other"): never {
  if (kind === "directory")
    refuse(
      given,
      "LocalPathIsDirectory",
      "The path is a directory; upload_file uploads one file.",
      "give the path of one regular file (list the directory's files yourself and upload them one by one).",
    );
  return refuse(
    given,
    "NotARegularFile",
    "The path is not a regular file (a FIFO, socket or device); it was not opened.",
    "give the path of a regular file.",
  );
}

/** An opened upload source. */
export interface OpenedFile extends CheckedPath {
  handle: FileHandle;
  size: number;
  mtimeMs: number;
}

/**
 * Opens an existing regular file for reading. Symlinks are followed only
 * while they stay inside; FIFOs and devices are refused before they are
 * opened (and opened non-blocking, should one be swapped in); a file with
 * more than one hard link is refused, since another of its names may lie
 * outside the allowed directories.
 */
export async function openForReading(
  given: string,
  allowed: AllowedDirs,
  mode: WalkMode = platformMode(),
): Promise<OpenedFile> {
  const opened = await openIfThere(given, allowed, mode);
  if (opened) return opened;
  return refuse(
    given,
    "LocalFileNotFound",
    "No file exists at this path.",
    `check the path; relative paths start from ${allowed.dirs[0]}.`,
  );
}

/** As openForReading, but undefined when nothing is at the path (a bulk download asks this of every new file). */
export async function openIfThere(
  given: string,
  allowed: AllowedDirs,
  mode: WalkMode = platformMode(),
): Promise<OpenedFile | undefined> {
  let abs = lexicalCheck(given, allowed);
  const scope = scopeOf(given, allowed, mode);
  for (let hops = 0, viaLink = false; hops <= MAX_SYMLINK_HOPS; hops++) {
    const step = await withParent(abs, scope, false, async (parent): Promise<OpenedFile | string | undefined> => {
      const st = parent.missing.length === 0 ? entryStat(parent.dir, parent.name) : undefined;
      if (!st) {
        if (viaLink)
          refuse(
            given,
            "LocalSymlinkRefused",
            "The path is a symlink whose target does not exist.",
            "give the path of a real file.",
          );
        return undefined;
      }
      if (st.isSymbolicLink()) {
        if (scope.followLinks === false) linkOnPath(given);
        return followLink(parent.dir, readlinkSync(parent.dir.at(parent.name)), []);
      }
      if (!st.isFile()) notRegular(given, st.isDirectory() ? "directory" : "other");
      const handle = await open(parent.dir.at(parent.name), O_READ);
      try {
        const opened = await handle.stat();
        if (!opened.isFile()) notRegular(given, opened.isDirectory() ? "directory" : "other");
        if (opened.nlink > 1) {
          refuse(
            given,
            "LocalHardLinkRefused",
            `The file has ${opened.nlink} hard links; another of its names may lie outside the allowed directories, so it is not read.`,
            "copy the file (a real copy, not a link) inside an allowed directory and upload the copy.",
          );
        }
        return { handle, size: opened.size, mtimeMs: opened.mtimeMs, path: join(parent.dir.real, parent.name), given };
      } catch (err) {
        await handle.close().catch(() => {});
        throw err;
      }
    });
    if (typeof step !== "string") return step;
    abs = step;
    viaLink = true;
  }
  return refuse(
    given,
    "LocalSymlinkRefused",
    "The path has a symlink loop (more than 40 links).",
    "give the path of a real file.",
  );
}

/** Checks an existing file for reading (opens and closes it): what upload_file will meet. */
export async function checkExistingPath(
  given: string,
  allowed: AllowedDirs,
  mode: WalkMode = platformMode(),
): Promise<CheckedPath> {
  const opened = await openForReading(given, allowed, mode);
  await opened.handle.close();
  return { path: opened.path, given };
}
