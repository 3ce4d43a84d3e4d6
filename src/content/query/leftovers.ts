/**
 * Query directories (workspace.ts: store-mcp-query-<pid>-…, in the temp
 * directory) that a server killed mid-query (SIGKILL, a crash) left behind:
 * removed once their process no longer runs, by a server's start and by its
 * first query. Only this user's directories; a running server's are kept.
 */
import { readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Query directories a server left behind (a SIGKILL): those of processes that no longer run. */
export function sweepLeftovers(dir = tmpdir()): number {
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const found = /^store-mcp-query-(\d+)-/.exec(name);
    if (!found) continue;
    const path = join(dir, name);
    try {
      if (alive(Number(found[1]))) continue;
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
