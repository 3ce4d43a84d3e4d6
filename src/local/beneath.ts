/**
 * Walks a path below an allowed directory one component at a time, never
 * letting the kernel follow a symlink, so a directory swapped for a symlink
 * between a check and a use cannot lead outside (the race a string path that
 * is checked, then re-resolved, always leaves open).
 *
 * On Linux ("fd" mode) every directory on the way is held open and each next
 * step names `/proc/self/fd/N/child`: the kernel resolves that from the open
 * directory itself, like openat(2), and O_NOFOLLOW refuses a symlink as the
 * last component. Symlinks are resolved here, by reading them and walking
 * their target again from an allowed directory, so one that leaves is refused.
 *
 * Elsewhere ("path" mode: macOS, Windows) there is no portable openat from
 * JavaScript: each directory's device and inode are recorded when it is
 * reached and checked again right before every use. That narrows the window
 * to microseconds but does not close it (README, Security model).
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { ActionableError } from "../runtime/errors.ts";

export type WalkMode = "fd" | "path";

/** The strongest mode this platform offers. */
export function platformMode(): WalkMode {
  return process.platform === "linux" ? "fd" : "path";
}

/** An allowed-directory-relative directory that was reached safely. */
export interface Dir {
  /** Its real path, as reached by the walk (for messages and results). */
  readonly real: string;
  /** A path naming `name` inside this very directory, valid until close(). */
  at(name: string): string;
  close(): void;
  /** Held across a job's files (held-dirs.ts): the same object for every file of the job written here while it is held. */
  readonly heldFor?: object;
}

/** What the walk needs to know to refuse: who asked, and which directories are allowed. */
export interface WalkScope {
  given: string;
  allowed: string[];
  mode: WalkMode;
  /** false: a symlink anywhere on the path is refused (paths made from store keys), not followed. Default true. */
  followLinks?: boolean;
  /** A job's folders held across its files (held-dirs.ts); only with followLinks false. */
  held?: DirHolder;
}

/** What holds folders across walks (held-dirs.ts): lends one still where it was, keeps one just reached. */
export interface DirHolder {
  lend(real: string): Dir | undefined;
  keep(real: string, dir: Dir): Dir;
}

const MAX_SYMLINK_HOPS = 40;
const O_DIR = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0);

export function refuse(given: string, code: string, message: string, hint: string): never {
  throw new ActionableError({ resource: given, code, message, hint });
}

/** A path made from a store key met a symlink: the key is unsafe to write there, wherever the link leads. */
export function linkOnPath(given: string): never {
  return refuse(
    given,
    "UnsafeLocalPath",
    "A symlink lies on this path; a path made from a store key follows no symlink, so nothing was written or removed through it.",
    "remove or rename the symlink in the local directory, or download to a directory without links.",
  );
}

export function leavesAllowed(given: string): never {
  return refuse(
    given,
    "LocalSymlinkRefused",
    "The path leads through a symlink to a place outside the allowed directories.",
    "use a file that really lies inside an allowed directory.",
  );
}

/** True when `child` is `root` or lies below it; separator-safe (`/data-evil` is not in `/data`). */
export function isInside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`));
}

/** Whether /proc/self/fd resolves here: checked at the first walk only (two more lookups through /proc for every file of a bulk job told nothing new). */
let procWorks = false;

/** Opens an allowed directory itself (a real path the operator or the client gave). */
function openDir(path: string, mode: WalkMode): Dir {
  if (mode === "path") return pathDir(path);
  const dir = fdDir(openSync(path, O_DIR), path);
  if (procWorks) return dir;
  try {
    lstatSync(dir.at("."));
    procWorks = true;
  } catch {
    dir.close();
    throw new ActionableError({
      resource: path,
      code: "LocalFilesUnavailable",
      message:
        "/proc is not mounted, and the server walks local paths through /proc/self/fd so that no swapped directory can lead outside.",
      hint: "the user must run the server where /proc is mounted (every normal Linux host and container has it).",
    });
  }
  return dir;
}

function fdDir(fd: number, real: string): Dir {
  let open = true;
  return {
    real,
    at: (name) => `/proc/self/fd/${fd}/${name}`,
    close: () => {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/** Path mode: re-check, right before each use, that the directory is still the one reached. */
function pathDir(real: string): Dir {
  const seen = lstatSync(real);
  return {
    real,
    at(name) {
      const now = lstatSync(real);
      if (
        now.isSymbolicLink() ||
        !now.isDirectory() ||
        now.ino !== seen.ino ||
        now.dev !== seen.dev ||
        realpathSync(real) !== real
      ) {
        throw Object.assign(new Error("a directory on the path was replaced"), { code: "ESWAPPED" });
      }
      return join(real, name);
    },
    close() {},
  };
}

export type Step =
  | { kind: "dir"; dir: Dir }
  | { kind: "link"; target: string }
  | { kind: "missing" }
  | { kind: "file" };

/** One step down from `dir` into `name`, never following a symlink. */
export function step(dir: Dir, name: string, mode: WalkMode, create: boolean): Step {
  const child = dir.at(name);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      if (mode === "fd") return { kind: "dir", dir: fdDir(openSync(child, O_DIR), join(dir.real, name)) };
      const st = lstatSync(child);
      if (st.isSymbolicLink()) return { kind: "link", target: readlinkSync(child) };
      if (!st.isDirectory()) return { kind: "file" };
      return { kind: "dir", dir: pathDir(join(dir.real, name)) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        if (!create) return { kind: "missing" };
        try {
          mkdirSync(child, 0o755);
        } catch (mkErr) {
          if ((mkErr as NodeJS.ErrnoException).code !== "EEXIST") throw mkErr;
        }
        continue; // open what is there now, whatever it is
      }
      if (code === "ENOTDIR" || code === "ELOOP") {
        const st = lstatSync(child);
        if (st.isSymbolicLink()) return { kind: "link", target: readlinkSync(child) };
        return { kind: "file" };
      }
      throw err;
    }
  }
  return { kind: "missing" };
}

/** Where a symlink found in `dir` leads, lexically, with the rest of the path appended. */
export function followLink(dir: Dir, target: string, rest: string[]): string {
  return resolve(dir.real, target, ...rest);
}

/** The result of walking to a path's parent directory. */
export interface Parent {
  /** The deepest directory reached; with `missing` non-empty, the path's parent does not exist yet. */
  dir: Dir;
  /** Directories still to be created, in order (only when the walk ran with create: false). */
  missing: string[];
  /** The last component. */
  name: string;
}

/**
 * Walks to the parent of `abs` (an absolute, normalized path lexically inside
 * an allowed directory), creating missing directories when `create`. Every
 * symlink met on the way is resolved here and must lead inside again.
 */
export function walkToParent(abs: string, scope: WalkScope, create: boolean): Parent {
  let pending = abs;
  for (let hops = 0; hops <= MAX_SYMLINK_HOPS; hops++) {
    const root = scope.allowed.find((d) => isInside(d, pending));
    if (root === undefined) leavesAllowed(scope.given);
    const parts = relative(root, pending)
      .split(sep)
      .filter((p) => p !== "");
    const name = parts.pop();
    if (name === undefined) {
      refuse(
        scope.given,
        "LocalPathIsDirectory",
        "The path is an allowed directory itself.",
        `give a file path inside it, e.g. ${join(scope.given, "name.ext")}.`,
      );
    }
    // A job's folder held since an earlier file, still where it was: no walk (held-dirs.ts).
    const held = scope.followLinks === false ? scope.held : undefined;
    const lent = held?.lend(join(root, ...parts));
    if (lent) return { dir: lent, missing: [], name };
    const start = held ? nearestHeld(held, root, parts) : undefined;
    let dir = start?.dir ?? openDir(root, scope.mode);
    let followed: string | undefined;
    try {
      for (let i = start?.depth ?? 0; i < parts.length; i++) {
        const next = step(dir, parts[i]!, scope.mode, create);
        if (next.kind === "dir") {
          dir.close();
          dir = next.dir;
          continue;
        }
        if (next.kind === "link") {
          if (scope.followLinks === false) linkOnPath(scope.given);
          followed = followLink(dir, next.target, [...parts.slice(i + 1), name]);
          break;
        }
        if (next.kind === "file")
          refuse(
            scope.given,
            "InvalidLocalPath",
            `A part of the path (${parts[i]}) is a file, not a directory.`,
            "check the path.",
          );
        // A folder still to be made (a job's files planned before their first is written): the deepest one there is held
        // for the next walk to it.
        const reached = held && i > 0 ? held.keep(join(root, ...parts.slice(0, i)), dir) : dir;
        return { dir: reached, missing: parts.slice(i), name };
      }
    } catch (err) {
      dir.close();
      throw err;
    }
    if (followed === undefined) return { dir: held ? held.keep(join(root, ...parts), dir) : dir, missing: [], name };
    dir.close();
    pending = followed;
  }
  return refuse(
    scope.given,
    "LocalSymlinkRefused",
    "The path has a symlink loop (more than 40 links).",
    "give the path of a real file.",
  );
}

/** The deepest folder on the way to `parts` below `root` that the job holds, still where it was, and how deep it is. */
function nearestHeld(held: DirHolder, root: string, parts: string[]): { dir: Dir; depth: number } | undefined {
  for (let depth = parts.length - 1; depth > 0; depth--) {
    const dir = held.lend(join(root, ...parts.slice(0, depth)));
    if (dir) return { dir, depth };
  }
  return undefined;
}

/** lstat of `name` in `dir`, undefined when nothing is there. */
export function entryStat(dir: Dir, name: string): Stats | undefined {
  try {
    // A missing name builds no error (a bulk download asks this of every new file, twice).
    return lstatSync(dir.at(name), { throwIfNoEntry: false });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}
