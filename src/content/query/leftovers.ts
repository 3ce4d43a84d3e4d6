/**
 * Query directories (workspace.ts: store-mcp-query-<pid>-…, in the temp
 * directory) that a server killed mid-query (SIGKILL, a crash) left behind:
 * removed by a server's start and by its first query once no process holds
 * their lock (dir-lock.ts), which every PID namespace sharing the directory
 * sees alike; a directory without a lock (an older server's) once its pid no
 * longer runs here. Only this user's directories; a running server's are kept.
 */
import { readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOCK_FILE, lockHeld } from "./dir-lock.ts";

/** Query directories a server left behind (a SIGKILL): those of processes that no longer run. */
export async function sweepLeftovers(dir = tmpdir()): Promise<number> {
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    // A directory being made has its lock before its name (workspace.ts); one a crash left half-made is swept too.
    const found = /^\.?store-mcp-query-(?:new-)?(\d+)-/.exec(name);
    if (!found) continue;
    const path = join(dir, name);
    try {
      if ((await lockHeld(join(path, LOCK_FILE))) ?? alive(Number(found[1]))) continue;
      const st = statSync(path);
      if (!st.isDirectory() || st.uid !== process.getuid?.()) continue;
      rmSync(path, { recursive: true, force: true });
      removed++;
    } catch {
      // Gone already, or not ours to remove.
    }
  }
  return removed;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
