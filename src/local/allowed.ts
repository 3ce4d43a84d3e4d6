import { realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isInside, type AllowedDirs } from "./sandbox.ts";

/**
 * Resolves the operator's --allowed-dir values to real directories, once at
 * start-up. Returns the problems for the configuration error report.
 */
export function realAllowedDirs(dirs: string[], cwd: string): { dirs: string[]; errors: string[] } {
  const out: string[] = [];
  const errors: string[] = [];
  for (const dir of dirs) {
    const abs = resolve(cwd, dir.startsWith("~") ? dir.replace(/^~/, homedir()) : dir);
    try {
      if (!statSync(abs).isDirectory()) {
        errors.push(`allowed dir: "${dir}" is not a directory.`);
        continue;
      }
      out.push(realpathSync(abs));
    } catch {
      errors.push(`allowed dir: "${dir}" does not exist.`);
    }
  }
  return { dirs: out, errors };
}

/** file:// root URIs from the client → real directories (others are ignored). */
export function rootDirs(uris: string[]): string[] {
  const out: string[] = [];
  for (const uri of uris) {
    if (!uri.startsWith("file://")) continue;
    try {
      out.push(realpathSync(fileURLToPath(uri)));
    } catch {
      // A root that does not exist here (another machine's path) allows nothing.
    }
  }
  return out;
}

/**
 * The effective rule: inside a configured dir AND, when the client gave roots,
 * inside a root. Neither → the working directory, unless that is / or $HOME.
 * `roots` undefined means the client did not declare roots; [] means it shared none.
 */
export function effectiveAllowedDirs(configured: string[], roots: string[] | undefined, cwd: string): AllowedDirs {
  if (roots !== undefined) {
    if (roots.length === 0) {
      return { dirs: [], problem: "The client declares roots but shared none (or none that exists on this machine), so no local path is allowed." };
    }
    if (configured.length === 0) return { dirs: roots };
    // Intersection of two sets of directory trees: the deeper of each nested pair.
    const both = new Set<string>();
    for (const c of configured) {
      for (const r of roots) {
        if (isInside(c, r)) both.add(r);
        else if (isInside(r, c)) both.add(c);
      }
    }
    if (both.size === 0) {
      return { dirs: [], problem: `None of the client's roots (${roots.join(", ")}) lies inside an allowed directory (${configured.join(", ")}).` };
    }
    return { dirs: [...both] };
  }
  if (configured.length > 0) return { dirs: configured };
  const real = safeRealpath(cwd);
  if (real === "/" || real === safeRealpath(homedir()) || /^[A-Za-z]:\\?$/.test(real)) {
    return {
      dirs: [],
      problem: `No directory is allowed: the server's working directory is ${real}, which is too broad to open up by default.`,
    };
  }
  return { dirs: [real] };
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}
