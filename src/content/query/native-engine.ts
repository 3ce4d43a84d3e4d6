/**
 * The query engine's native pair (DuckDB's Node binding and the library it
 * links to), as the compiled executable carries it: zstd-compressed files
 * embedded by the build (scripts/lib/duckdb-embed.ts). A shared library can
 * only be loaded from a real file, and the binding finds the library beside
 * itself ($ORIGIN, @loader_path; on Windows Bun's dlopen searches the binding's
 * folder, LOAD_WITH_ALTERED_SEARCH_PATH), so the first query of a version writes both
 * into a cache directory of the user's own (0700, checked), and every later
 * process loads them from there. Nothing here runs unless a query does.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

export interface EmbeddedFile {
  name: string;
  /** Where the executable holds the compressed bytes. */
  path: string;
  /** Bytes once decompressed. */
  size: number;
}

export interface EmbeddedEngine {
  /** Names the cache directory: a new build of the pair gets a new one. */
  id: string;
  /** The binding first; the library it loads beside it. */
  files: EmbeddedFile[];
}

/** The platform's cache directory for applications, else the temp directory. */
function cacheRoot(env = process.env): string {
  if (process.platform === "win32")
    return join(env.LOCALAPPDATA || join(homedir(), "AppData", "Local"), "store-mcp-server", "cache");
  if (process.platform === "darwin") return join(homedir(), "Library", "Caches", "store-mcp-server");
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "store-mcp-server");
}

/** A directory only this user can write into: anyone else who could would choose the code this process runs. */
function ownDirectory(dir: string): boolean {
  if (process.platform === "win32") return true;
  const st = statSync(dir);
  return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o022) === 0;
}

function complete(dir: string, files: EmbeddedFile[]): boolean {
  return files.every((f) => existsSync(join(dir, f.name)) && statSync(join(dir, f.name)).size === f.size);
}

/** Writes the pair into a new directory beside `dir`, then renames it into place (a racing process's copy wins as well). */
function extract(root: string, dir: string, files: EmbeddedFile[]): void {
  const staging = mkdtempSync(join(root, ".extract-"));
  try {
    for (const f of files) {
      const bytes = Bun.zstdDecompressSync(readFileSync(f.path));
      if (bytes.length !== f.size)
        throw new Error(`the embedded ${f.name} decompressed to ${bytes.length} bytes, not ${f.size}`);
      writeFileSync(join(staging, f.name), bytes, { mode: 0o700 });
    }
    try {
      renameSync(staging, dir);
    } catch (err) {
      if (!complete(dir, files)) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function placeIn(root: string, engine: EmbeddedEngine): string {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  chmodSync(root, 0o700);
  if (!ownDirectory(root)) throw new Error(`${root} is not a directory only this user can write to`);
  const dir = join(root, `duckdb-${engine.id}`);
  if (!complete(dir, engine.files)) {
    rmSync(dir, { recursive: true, force: true });
    extract(root, dir, engine.files);
  }
  if (!ownDirectory(dir)) throw new Error(`${dir} is not a directory only this user can write to`);
  return dir;
}

/** The binding's exports, loaded from the cache (written there first when missing). */
export function loadEmbeddedEngine(engine: EmbeddedEngine): unknown {
  let dir: string;
  try {
    dir = placeIn(cacheRoot(), engine);
  } catch {
    // A home without a writable cache (a container's read-only root): the temp directory, one per user.
    dir = placeIn(join(tmpdir(), `store-mcp-server-${process.getuid?.() ?? "user"}`), engine);
  }
  const module = { exports: {} as unknown };
  process.dlopen(module, join(dir, engine.files[0]!.name));
  return module.exports;
}
