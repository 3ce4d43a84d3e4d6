import { lstat, realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { ActionableError } from "../errors.ts";

/**
 * Where local files may be read and written. `dirs` are real (symlink-free)
 * absolute paths; `problem` explains why there are none.
 */
export interface AllowedDirs {
  dirs: string[];
  problem?: string;
}

/** A path checked against the allowed directories, free of symlinks up to its parent. */
export interface CheckedPath {
  /** The real, absolute path to use. */
  path: string;
  /** What the caller wrote, for messages. */
  given: string;
}

const HOW_TO_ALLOW =
  "the user must allow a directory with --allowed-dir DIR (or STORE_ALLOWED_DIRS) in the MCP client configuration, or share it as a client root.";

/** True when `child` is `root` or lies below it; separator-safe (`/data-evil` is not in `/data`). */
export function isInside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`));
}

/** `~` and `~/x` → the home directory; relative paths → against the first allowed dir. */
export function absolutize(given: string, base: string): string {
  let p = given;
  if (p === "~") p = homedir();
  else if (p.startsWith("~/") || p.startsWith(`~${sep}`)) p = join(homedir(), p.slice(2));
  return resolve(base, p);
}

function refuse(given: string, code: string, message: string, hint: string): never {
  throw new ActionableError({ resource: given, code, message, hint });
}

function outside(given: string, allowed: AllowedDirs): never {
  return refuse(
    given,
    "LocalPathNotAllowed",
    `This path is outside the directories the server may use (${allowed.dirs.join(", ")}).`,
    `use a path inside one of them, e.g. ${join(allowed.dirs[0] ?? ".", "file.txt")}; ${HOW_TO_ALLOW}`,
  );
}

function lexicalCheck(given: string, allowed: AllowedDirs): string {
  if (allowed.dirs.length === 0) {
    refuse(given, "LocalFilesDisabled", allowed.problem ?? "No local directory is allowed.", HOW_TO_ALLOW);
  }
  if (given.trim() === "") refuse(given, "InvalidLocalPath", "The local path is empty.", "give a file path.");
  if (given.includes("\0")) refuse(given.replaceAll("\0", "\\0"), "InvalidLocalPath", "The local path contains a NUL byte.", "give a plain file path.");
  const abs = absolutize(given, allowed.dirs[0] as string);
  if (!allowed.dirs.some((d) => isInside(d, abs))) outside(given, allowed);
  return abs;
}

/** An existing file to read: every symlink on the way must stay inside. */
export async function checkExistingPath(given: string, allowed: AllowedDirs): Promise<CheckedPath> {
  const abs = lexicalCheck(given, allowed);
  let real: string;
  try {
    real = await realpath(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      const dangling = await lstat(abs).then((s) => s.isSymbolicLink(), () => false);
      if (dangling) refuse(given, "LocalSymlinkRefused", "The path is a symlink whose target does not exist.", "give the path of a real file.");
      refuse(given, "LocalFileNotFound", "No file exists at this path.", "check the path; relative paths start from " + allowed.dirs[0] + ".");
    }
    if (code === "EACCES") refuse(given, "LocalAccessDenied", "The server may not read this path.", "choose a readable file.");
    if (code === "ELOOP") refuse(given, "LocalSymlinkRefused", "The path has a symlink loop.", "give the path of a real file.");
    throw err;
  }
  if (!allowed.dirs.some((d) => isInside(d, real))) {
    refuse(given, "LocalSymlinkRefused", "The path leads through a symlink to a place outside the allowed directories.", "use a file that really lies inside an allowed directory.");
  }
  return { path: real, given };
}

/**
 * A file to create or replace: its nearest existing ancestor must really lie
 * inside; an existing final symlink must point inside and not dangle (it is
 * then replaced as a link, never followed). Returns the path with the real
 * ancestor substituted, so nothing later resolves through a symlink.
 */
export async function checkTargetPath(given: string, allowed: AllowedDirs): Promise<CheckedPath & { exists: boolean }> {
  const abs = lexicalCheck(given, allowed);
  const stat = await lstat(abs).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT" || err.code === "ENOTDIR") return undefined;
    throw err;
  });
  if (stat?.isDirectory()) {
    refuse(given, "LocalPathIsDirectory", "The path is a directory.", "give a file path inside it, e.g. " + join(given, "name.ext") + ".");
  }
  if (stat?.isSymbolicLink()) {
    const target = await realpath(abs).catch(() => undefined);
    if (target === undefined) refuse(given, "LocalSymlinkRefused", "The path is a symlink whose target does not exist.", "choose another local_path.");
    if (!allowed.dirs.some((d) => isInside(d, target))) {
      refuse(given, "LocalSymlinkRefused", "The path is a symlink that points outside the allowed directories.", "choose another local_path.");
    }
  }
  // Walk up to the nearest existing ancestor and check where it really is.
  let ancestor = dirname(abs);
  const missing: string[] = [];
  for (;;) {
    const real = await realpath(ancestor).catch(() => undefined);
    if (real !== undefined) {
      if (!allowed.dirs.some((d) => isInside(d, real))) {
        refuse(given, "LocalSymlinkRefused", "A directory on this path is a symlink that leads outside the allowed directories.", "use a path that really lies inside an allowed directory.");
      }
      const parent = join(real, ...missing.reverse());
      return { path: join(parent, relative(dirname(abs), abs)), given, exists: stat !== undefined };
    }
    const up = dirname(ancestor);
    if (up === ancestor) outside(given, allowed);
    missing.push(relative(up, ancestor));
    ancestor = up;
  }
}
