/**
 * Walks a directory tree for a bulk upload the way the sandbox walks one path
 * (beneath.ts): every directory is held open while its entries are read, each
 * subdirectory is entered from its held parent without following a symlink,
 * and each file is opened from its held directory with O_NOFOLLOW and checked
 * on the descriptor. A symlink, FIFO, socket, device or file with several hard
 * links met on the way is skipped and reported, never followed or read; a
 * directory swapped for a symlink mid-walk is refused by the open itself.
 */
import { constants, readdirSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { type Dir, entryStat, step, type WalkMode } from "./beneath.ts";
import { localError } from "./errors.ts";
import { type UploadSource, uploadSourceOf } from "./source.ts";

const O_READ = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** A regular file found by the walk, already opened; the taker must close `source`. */
export interface WalkedFile {
  /** Its path below the walked directory, with `/` separators. */
  rel: string;
  size: number;
  mtimeMs: number;
  source: UploadSource;
}

/** Something the walk met and left alone, and why. */
export interface WalkSkip {
  rel: string;
  code: string;
  message: string;
}

export interface WalkEvents {
  skipped(skip: WalkSkip): void;
  /** A directory with nothing in it (object stores have no empty folders). */
  emptyDir?(rel: string): void;
}

interface Frame {
  dir: Dir;
  rel: string;
  names: string[];
  next: number;
}

const SKIPS = {
  link: ["LocalSymlinkSkipped", "a symlink: not followed (bulk uploads read only regular files inside the directory)"],
  special: ["NotARegularFile", "a FIFO, socket or device: not read"],
  hardLink: [
    "LocalHardLinkSkipped",
    "has several hard links, and another of its names may lie outside the allowed directories: not read",
  ],
  swapped: [
    "LocalPathChanged",
    "changed while the directory was walked (now a symlink or not a directory): not entered",
  ],
} as const;

/** Yields the regular files below `root` (held open by the caller, closed here when the walk ends), in name order, depth first. */
export async function* walkFiles(
  root: Dir,
  rootGiven: string,
  mode: WalkMode,
  events: WalkEvents,
): AsyncGenerator<WalkedFile> {
  const stack: Frame[] = [];
  const skip = (rel: string, why: keyof typeof SKIPS) =>
    events.skipped({ rel, code: SKIPS[why][0], message: SKIPS[why][1] });
  try {
    stack.push(frameOf(root, "", rootGiven, events));
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      const name = frame.names[frame.next++];
      if (name === undefined) {
        stack.pop()!.dir.close();
        continue;
      }
      const rel = frame.rel + name;
      const st = entryStat(frame.dir, name);
      if (!st) continue; // removed meanwhile
      if (st.isDirectory()) {
        const child = step(frame.dir, name, mode, false);
        if (child.kind === "dir") stack.push(frameOf(child.dir, `${rel}/`, join(rootGiven, rel), events));
        else if (child.kind !== "missing") skip(rel, "swapped");
      } else if (st.isSymbolicLink()) skip(rel, "link");
      else if (!st.isFile()) skip(rel, "special");
      else if (st.nlink > 1) skip(rel, "hardLink");
      else {
        const file = await openFile(frame.dir, name, rel, join(rootGiven, rel));
        if (typeof file === "string") skip(rel, file);
        else if (file) yield file;
      }
    }
  } finally {
    for (const frame of stack) frame.dir.close();
  }
}

function frameOf(dir: Dir, rel: string, given: string, events: WalkEvents): Frame {
  let names: string[];
  try {
    names = readdirSync(dir.at(".")).sort();
  } catch (err) {
    dir.close();
    throw localError(given, err, "read");
  }
  if (names.length === 0 && rel !== "") events.emptyDir?.(rel.slice(0, -1));
  return { dir, rel, names, next: 0 };
}

/** Opens `name` in its held directory, never through a symlink, and checks what was opened. */
async function openFile(
  dir: Dir,
  name: string,
  rel: string,
  given: string,
): Promise<WalkedFile | keyof typeof SKIPS | undefined> {
  let handle;
  try {
    handle = await open(dir.at(name), O_READ);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP" || code === "ENXIO") return code === "ELOOP" ? "link" : "special";
    throw localError(given, err, "read");
  }
  const st = await handle.stat();
  const problem = !st.isFile() ? "special" : st.nlink > 1 ? "hardLink" : undefined;
  if (problem) {
    await handle.close().catch(() => {});
    return problem;
  }
  return {
    rel,
    size: st.size,
    mtimeMs: st.mtimeMs,
    source: uploadSourceOf(handle, st.size, st.mtimeMs, join(dir.real, name), given),
  };
}
