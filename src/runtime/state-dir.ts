/**
 * Where this server keeps its state (kept transfers: kept-transfers.ts), and
 * whether that directory may be used. It decides what this server deletes
 * and aborts, so it is used only when it is this user's own: owned by them,
 * not writable by group or others, not a symlink (the database file
 * likewise).
 */
import { existsSync, lstatSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** The database's name in the state directory (kept-transfers.ts writes it; its file must be the user's too). */
export const STATE_DATABASE = "state.db";

/** Why `dir` is not this user's own to keep state in, or undefined. Created (0700) when missing. */
export function stateDirProblem(dir: string): string | undefined {
  if (process.platform === "win32") return undefined;
  try {
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = lstatSync(dir);
    if (st.isSymbolicLink()) return "it is a symlink";
    if (!st.isDirectory()) return "it is not a directory";
    if (st.uid !== process.getuid?.()) return "another user owns it";
    if ((st.mode & 0o022) !== 0) return "others can write to it";
    const db = join(dir, STATE_DATABASE);
    if (existsSync(db)) {
      const f = lstatSync(db);
      if (!f.isFile() || f.uid !== process.getuid?.() || (f.mode & 0o022) !== 0)
        return `its ${STATE_DATABASE} is not a file only this user can write`;
    }
    return undefined;
  } catch (err) {
    return `it cannot be made or read (${(err as Error).message})`;
  }
}

/**
 * The state directory: STORE_STATE_DIR when set, else the platform's place
 * for an application's state (XDG_STATE_HOME or ~/.local/state on Linux,
 * ~/Library/Application Support on macOS, %LOCALAPPDATA% on Windows).
 * "off" keeps nothing.
 */
export function stateDirFrom(env: Record<string, string | undefined>, platform = process.platform): string | undefined {
  const given = env.STORE_STATE_DIR?.trim();
  if (given === "off") return undefined;
  if (given) return given;
  const app = "store-mcp-server";
  if (platform === "win32") return join(env.LOCALAPPDATA || join(homedir(), "AppData", "Local"), app);
  if (platform === "darwin") return join(homedir(), "Library", "Application Support", app);
  return join(env.XDG_STATE_HOME || join(homedir(), ".local", "state"), app);
}
