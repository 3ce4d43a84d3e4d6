import { readlinkSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve, sep } from "node:path";
import {
  type Dir,
  type DirHolder,
  entryStat,
  followLink,
  isInside,
  linkOnPath,
  type Parent,
  platformMode,
  refuse,
  type WalkMode,
  type WalkScope,
  walkToParent,
} from "./beneath.ts";
import { localError } from "./errors.ts";

export { isInside, type WalkMode };

/**
 * Where local files may be read and written. `dirs` are real (symlink-free)
 * absolute paths; `problem` explains why there are none.
 */
export interface AllowedDirs {
  dirs: string[];
  problem?: string;
  /** What the user can do about `problem`, when it is not "allow a directory" (the client's roots exclude the allowed ones). */
  hint?: string;
  /** Paths made from store keys (a bulk download, a mirror's deletes): no symlink is followed at all, not even one that stays inside. */
  noLinks?: boolean;
  /** With noLinks: the job's folders held across its files (held-dirs.ts). */
  held?: DirHolder;
}

/** A path checked against the allowed directories. */
export interface CheckedPath {
  /** The real, absolute path (as the walk reached it), for results. */
  path: string;
  /** What the caller wrote, for messages. */
  given: string;
}

const HOW_TO_ALLOW =
  "the user must allow a directory with --allowed-dir DIR (or STORE_ALLOWED_DIRS) in the MCP client configuration, or share it as a client root.";
export const MAX_SYMLINK_HOPS = 40;

/** `~` and `~/x` → the home directory; relative paths → against the first allowed dir. */
export function absolutize(given: string, base: string): string {
  let p = given;
  if (p === "~") p = homedir();
  else if (p.startsWith("~/") || p.startsWith(`~${sep}`)) p = join(homedir(), p.slice(2));
  return resolve(base, p);
}

function outside(given: string, allowed: AllowedDirs): never {
  return refuse(
    given,
    "LocalPathNotAllowed",
    `This path is outside the directories the server may use (${allowed.dirs.join(", ")}).`,
    `use a path inside one of them, e.g. ${join(allowed.dirs[0] ?? ".", "file.txt")}; ${HOW_TO_ALLOW}`,
  );
}

/** The absolute, normalized path, refused unless it lies lexically inside an allowed directory. */
export function lexicalCheck(given: string, allowed: AllowedDirs): string {
  if (allowed.dirs.length === 0) {
    refuse(
      given,
      "LocalFilesDisabled",
      allowed.problem ?? "No local directory is allowed.",
      allowed.hint ?? HOW_TO_ALLOW,
    );
  }
  if (given.trim() === "") refuse(given, "InvalidLocalPath", "The local path is empty.", "give a file path.");
  if (given.includes("\0"))
    refuse(
      given.replaceAll("\0", "\\0"),
      "InvalidLocalPath",
      "The local path contains a NUL byte.",
      "give a plain file path.",
    );
  const abs = absolutize(given, allowed.dirs[0] as string);
  if (!allowed.dirs.some((d) => isInside(d, abs))) outside(given, allowed);
  return abs;
}

export function scopeOf(given: string, allowed: AllowedDirs, mode: WalkMode): WalkScope {
  return {
    given,
    allowed: allowed.dirs,
    mode,
    ...(allowed.noLinks ? { followLinks: false, ...(allowed.held ? { held: allowed.held } : {}) } : {}),
  };
}

/** Runs `use` on the parent of `abs`, closing the directory it holds afterwards; fs errors become local errors. */
export async function withParent<T>(
  abs: string,
  scope: WalkScope,
  create: boolean,
  use: (parent: Parent) => Promise<T> | T,
): Promise<T> {
  let parent: Parent | undefined;
  try {
    parent = walkToParent(abs, scope, create);
    return await use(parent);
  } catch (err) {
    throw localError(scope.given, err, create ? "write" : "read");
  } finally {
    parent?.dir.close();
  }
}

/**
 * Whether something is at the target, refusing a directory, a symlink that
 * dangles or leads outside (an existing symlink inside is replaced as a link
 * on overwrite, never followed).
 */
export async function inspectTarget(parent: Parent, scope: WalkScope): Promise<boolean> {
  if (parent.missing.length > 0) return false;
  const st = entryStat(parent.dir, parent.name);
  if (!st) return false;
  if (st.isDirectory())
    refuse(
      scope.given,
      "LocalPathIsDirectory",
      "The path is a directory.",
      `give a file path inside it, e.g. ${join(scope.given, "name.ext")}.`,
    );
  if (st.isSymbolicLink()) {
    if (scope.followLinks === false) linkOnPath(scope.given);
    let abs = followLink(parent.dir, readlinkSync(parent.dir.at(parent.name)), []);
    for (let hops = 0; ; hops++) {
      if (hops > MAX_SYMLINK_HOPS || !scope.allowed.some((d) => isInside(d, abs))) {
        refuse(
          scope.given,
          "LocalSymlinkRefused",
          "The path is a symlink that points outside the allowed directories (or loops).",
          "choose another local_path.",
        );
      }
      const next = await withParent(abs, scope, false, (p) => {
        const target = p.missing.length === 0 ? entryStat(p.dir, p.name) : undefined;
        if (!target)
          refuse(
            scope.given,
            "LocalSymlinkRefused",
            "The path is a symlink whose target does not exist.",
            "choose another local_path.",
          );
        return target.isSymbolicLink() ? followLink(p.dir, readlinkSync(p.dir.at(p.name)), []) : undefined;
      });
      if (next === undefined) break;
      abs = next;
    }
  }
  return true;
}

/** A name no directory entry can have: walking to its parent reaches a directory itself. */
const INSIDE = "\0";

/**
 * Opens an existing directory at or below an allowed directory and holds it
 * (symlinks on the way are followed only while they stay inside), for a walk
 * of its tree; undefined when it does not exist.
 */
export function openDirectory(given: string, allowed: AllowedDirs, mode: WalkMode = platformMode()): Dir | undefined {
  const abs = lexicalCheck(given, allowed);
  try {
    const parent = walkToParent(join(abs, INSIDE), scopeOf(given, allowed, mode), false);
    if (parent.missing.length === 0) return parent.dir;
    parent.dir.close();
    return undefined;
  } catch (err) {
    throw localError(given, err, "read");
  }
}

/** The absolute path `given` names, refused unless it lies inside an allowed directory. */
export function allowedPath(given: string, allowed: AllowedDirs): string {
  return lexicalCheck(given, allowed);
}

/** A download target, checked without creating anything. */
export async function checkTargetPath(
  given: string,
  allowed: AllowedDirs,
  mode: WalkMode = platformMode(),
): Promise<CheckedPath & { exists: boolean }> {
  const abs = lexicalCheck(given, allowed);
  const scope = scopeOf(given, allowed, mode);
  return withParent(abs, scope, false, async (parent) => ({
    path: join(parent.dir.real, ...parent.missing, parent.name),
    given,
    exists: await inspectTarget(parent, scope),
  }));
}

/** Walks to a download target's parent, creating missing directories, and runs `use` while holding it. */
export async function withTargetParent<T>(
  given: string,
  allowed: AllowedDirs,
  mode: WalkMode,
  use: (parent: Parent, exists: boolean) => Promise<T>,
): Promise<T> {
  const abs = lexicalCheck(given, allowed);
  const scope = scopeOf(given, allowed, mode);
  return withParent(abs, scope, true, async (parent) => use(parent, await inspectTarget(parent, scope)));
}
