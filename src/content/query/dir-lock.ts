/**
 * A query directory's liveness as a lock its server holds: an exclusive
 * flock(2) on the directory's `.lock` file, taken when the directory is made
 * and held until it is removed. The kernel drops it when the process ends
 * however it ends (SIGKILL, OOM), and it is seen the same from every PID
 * namespace that shares the directory, where a pid is not: two servers in two
 * containers sharing one temp directory each saw the other's live queries as
 * dead by their pids, and swept them mid-query. Where flock cannot be reached
 * (no glibc or libSystem to load, Windows), `undefined` says so and the
 * sweep falls back to judging by pid.
 */
import { closeSync, openSync } from "node:fs";

const LOCK_EX = 2;
const LOCK_NB = 4;
export const LOCK_FILE = ".lock";

type Flock = (fd: number, operation: number) => number;
let flock: Flock | null | undefined;

/** libc's flock, loaded on first use; null where it cannot be. */
async function loadFlock(): Promise<Flock | null> {
  if (flock !== undefined) return flock;
  const library =
    process.platform === "linux" ? "libc.so.6" : process.platform === "darwin" ? "libSystem.B.dylib" : undefined;
  try {
    if (!library) throw new Error("no flock here");
    const { dlopen, FFIType } = await import("bun:ffi");
    const lib = dlopen(library, { flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
    flock = (fd, op) => lib.symbols.flock(fd, op) as number;
  } catch {
    flock = null;
  }
  return flock;
}

/** Takes the lock on `path` (created): a release to call when the directory goes; undefined where there is no flock. */
export async function holdLock(path: string): Promise<(() => void) | undefined> {
  const lock = await loadFlock();
  if (!lock) return undefined;
  const fd = openSync(path, "w", 0o600);
  if (lock(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd);
    return undefined;
  }
  return () => closeSync(fd);
}

/**
 * Whether a live process holds the lock on `path`: true or false, or undefined where that cannot be told (no lock
 * file, as an older server made its directories; no flock here).
 */
export async function lockHeld(path: string): Promise<boolean | undefined> {
  const lock = await loadFlock();
  if (!lock) return undefined;
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    return lock(fd, LOCK_EX | LOCK_NB) !== 0;
  } finally {
    closeSync(fd);
  }
}
