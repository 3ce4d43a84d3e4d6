/**
 * Folders held open across one job's files (a bulk download writes thousands
 * of files into a few folders): a file's walk to its folder becomes one check
 * that the held folder is still where it was reached, instead of opening the
 * allowed directory and every folder on the way again (twice a file: the
 * plan's look and the write).
 *
 * The check is the walk's own guarantee, made at each use: in fd mode the
 * kernel's name for the held descriptor (`/proc/self/fd/N`) must still be
 * the folder's real path, so a folder renamed, removed, or swapped for a
 * symlink mid-job (its old self moved away) fails it; the folder is then
 * dropped and walked to afresh, which refuses the symlink as any walk does.
 * In path mode every use re-checks the folder already (beneath.ts pathDir).
 * Only paths made from store keys use it: they follow no symlink, so a
 * folder's real path is its lexical one.
 */
import { readlinkSync } from "node:fs";
import type { Dir, DirHolder } from "./beneath.ts";

/** Folders held at most: each is a descriptor; a job with more folders walks to the others. */
const MAX_HELD = 128;

interface Held {
  dir: Dir;
  /** Walks using it now: it is closed only when none is. */
  users: number;
  dropped: boolean;
}

export class HeldDirs implements DirHolder {
  readonly #held = new Map<string, Held>();

  /** The folder at `real`, still there, lent until the lease's close(); undefined: walk to it. */
  lend(real: string): Dir | undefined {
    const held = this.#held.get(real);
    if (!held) return undefined;
    if (!stillAt(held.dir, real)) {
      this.#drop(real, held);
      return undefined;
    }
    // Most recently used last: the first entries are the ones to let go.
    this.#held.delete(real);
    this.#held.set(real, held);
    return this.#lease(held);
  }

  /** Keeps `dir`, just reached by a walk, and lends it back; when nothing more can be held, `dir` itself. */
  keep(real: string, dir: Dir): Dir {
    if (this.#held.has(real) || !this.#room()) return dir;
    const held: Held = { dir, users: 0, dropped: false };
    this.#held.set(real, held);
    return this.#lease(held);
  }

  /** Lets every folder go (the job ended); one still in use closes when its walk ends. */
  release(): void {
    for (const [real, held] of this.#held) this.#drop(real, held);
  }

  #room(): boolean {
    if (this.#held.size < MAX_HELD) return true;
    for (const [real, held] of this.#held) {
      if (held.users > 0) continue;
      this.#drop(real, held);
      return true;
    }
    return false;
  }

  #drop(real: string, held: Held): void {
    this.#held.delete(real);
    held.dropped = true;
    if (held.users === 0) held.dir.close();
  }

  #lease(held: Held): Dir {
    held.users++;
    let open = true;
    return {
      real: held.dir.real,
      heldFor: held,
      at: (name) => held.dir.at(name),
      close: () => {
        if (!open) return;
        open = false;
        if (--held.users === 0 && held.dropped) held.dir.close();
      },
    };
  }
}

/** Whether a held folder is still the one at `real` (fd mode: the kernel's name for its descriptor). */
function stillAt(dir: Dir, real: string): boolean {
  try {
    const proc = dir.at("");
    // Path mode: at() itself checked the folder (and throws when it was swapped).
    if (!proc.startsWith("/proc/self/fd/")) return true;
    return readlinkSync(proc.slice(0, -1)) === real;
  } catch {
    return false;
  }
}
