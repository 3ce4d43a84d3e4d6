/** Local operations of bulk jobs beyond one upload or download: walking a tree, knowing a file again, removing one. */
import { createHash } from "node:crypto";
import { unlinkSync } from "node:fs";
import { ActionableError } from "../runtime/errors.ts";
import { entryStat, type WalkMode, walkToParent } from "./beneath.ts";
import { localError } from "./errors.ts";
import { openIfThere } from "./reading.ts";
import { type AllowedDirs, allowedPath, openDirectory, scopeOf } from "./sandbox.ts";
import { type WalkEvents, type WalkedFile, walkFiles } from "./walk.ts";

/**
 * The regular files below `given` (a directory inside the allowed ones),
 * opened one at a time as the walk reaches them. The directory is opened at
 * the first pull, so a walk never started holds nothing; a missing directory
 * is an error, or (`missingOk`) an empty walk.
 */
export async function* walkTree(
  given: string,
  allowed: AllowedDirs,
  mode: WalkMode,
  events: WalkEvents,
  missingOk = false,
): AsyncGenerator<WalkedFile> {
  const root = openDirectory(given, allowed, mode);
  if (!root) {
    if (missingOk) return;
    throw new ActionableError({
      resource: given,
      code: "LocalDirectoryNotFound",
      message: "No directory exists at this path.",
      hint: `check the path; relative paths start from ${allowed.dirs[0]}.`,
    });
  }
  yield* walkFiles(root, given, mode, events);
}

/** Whether a directory exists at `given` (inside the allowed ones; refused otherwise), and its real path. */
export function checkDirectory(given: string, allowed: AllowedDirs, mode: WalkMode): { exists: boolean; path: string } {
  const dir = openDirectory(given, allowed, mode);
  if (!dir) return { exists: false, path: allowedPath(given, allowed) };
  dir.close();
  return { exists: true, path: dir.real };
}

/** What a file at `given` is, for comparing it with an object: undefined when nothing is there. */
export interface LocalFileState {
  size: number;
  mtimeMs: number;
  /** Its MD5, hex (read through the same descriptor). */
  md5(): Promise<string>;
}

/** Opens the file at `given` (the sandbox's checks) and hands its state to `use`; undefined when nothing is there. */
export async function withLocalFile<T>(
  given: string,
  allowed: AllowedDirs,
  mode: WalkMode,
  use: (state: LocalFileState | undefined) => Promise<T>,
): Promise<T> {
  let opened;
  try {
    opened = await openIfThere(given, allowed, mode);
  } catch (err) {
    // Gone between the look and the open.
    if (!(err instanceof ActionableError && err.code === "LocalFileNotFound")) throw err;
  }
  if (!opened) return use(undefined);
  const { handle } = opened;
  try {
    const st = await handle.stat();
    return await use({
      size: st.size,
      mtimeMs: st.mtimeMs,
      md5: async () => {
        const hash = createHash("md5");
        const buffer = Buffer.allocUnsafe(Math.min(1024 * 1024, Math.max(1, st.size)));
        for (let position = 0; ; ) {
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
          if (bytesRead === 0) break;
          hash.update(buffer.subarray(0, bytesRead));
          position += bytesRead;
        }
        return hash.digest("hex");
      },
    });
  } finally {
    await handle.close().catch(() => {});
  }
}

/** Removes the regular file at `given` from its held directory; a directory, symlink or anything else is refused. */
export function removeLocalFile(given: string, allowed: AllowedDirs, mode: WalkMode): void {
  const abs = allowedPath(given, allowed);
  let parent;
  try {
    parent = walkToParent(abs, scopeOf(given, allowed, mode), false);
    if (parent.missing.length > 0) return;
    const st = entryStat(parent.dir, parent.name);
    if (!st) return;
    if (!st.isFile())
      throw new ActionableError({
        resource: given,
        code: "NotARegularFile",
        message: "Not a regular file; it was left alone.",
        hint: "remove it yourself if it should go.",
      });
    unlinkSync(parent.dir.at(parent.name));
  } catch (err) {
    throw localError(given, err, "write");
  } finally {
    parent?.dir.close();
  }
}
