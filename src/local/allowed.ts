import { realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type AllowedDirs, isInside } from "./sandbox.ts";

/** Directories that are never a sensible sandbox: opening one opens the system, or every user's files. */
const BROAD_DIRS = [
  "/",
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/home",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/media",
  "/mnt",
  "/opt",
  "/proc",
  "/root",
  "/run",
  "/sbin",
  "/srv",
  "/sys",
  "/usr",
  "/usr/bin",
  "/usr/lib",
  "/usr/local",
  "/usr/sbin",
  "/usr/share",
  "/var",
  "/var/lib",
  "/Applications",
  "/Library",
  "/System",
  "/Users",
  "/Volumes",
  "/private",
  "/private/var",
  "/cores",
];
/** Trees where no directory is a sensible sandbox: system configuration, kernel interfaces, credentials. */
const SYSTEM_TREES = ["/etc", "/proc", "/sys", "/dev", "/boot", "/private/etc", "/System"];
const HOME_SECRET_DIRS = [".ssh", ".aws", ".gnupg", ".kube", ".docker", ".config/gcloud"];
const WINDOWS_BROAD =
  /^[A-Za-z]:\\?$|^[A-Za-z]:\\(Windows|Program Files|Program Files \(x86\)|ProgramData|Users)(\\.*)?$/i;

/**
 * Why `dir` (a real path) is too broad to allow by default, or undefined when it is fine:
 * /, a drive root, the home directory or one of its ancestors, a system directory.
 */
export function tooBroad(dir: string, home = safeRealpath(homedir())): string | undefined {
  if (WINDOWS_BROAD.test(dir)) return "a drive root or a Windows system directory";
  if (dir === home) return "the home directory (it holds credentials such as ~/.ssh and ~/.aws)";
  if (isInside(dir, home)) return "an ancestor of the home directory";
  if (BROAD_DIRS.includes(dir)) return "a system directory";
  if (SYSTEM_TREES.some((tree) => isInside(tree, dir))) return "inside a system directory";
  if (HOME_SECRET_DIRS.some((d) => isInside(resolve(home, d), dir))) return "a credentials directory";
  return undefined;
}

const BROAD_HINT =
  "name a project folder inside it, or (if you really mean it) add --allow-broad-dirs / STORE_ALLOW_BROAD_DIRS=true";

/**
 * Resolves the operator's --allowed-dir values to real directories, once at
 * start-up. Returns the problems for the configuration error report.
 */
export function realAllowedDirs(dirs: string[], cwd: string, allowBroad = false): { dirs: string[]; errors: string[] } {
  const out: string[] = [];
  const errors: string[] = [];
  for (const dir of dirs) {
    if (dir.trim() === "") {
      errors.push("allowed dir: an empty value was given; name a directory.");
      continue;
    }
    const abs = resolve(cwd, dir.startsWith("~") ? dir.replace(/^~/, homedir()) : dir);
    try {
      if (!statSync(abs).isDirectory()) {
        errors.push(`allowed dir: "${dir}" is not a directory.`);
        continue;
      }
      const real = realpathSync(abs);
      const broad = allowBroad ? undefined : tooBroad(real);
      if (broad) {
        errors.push(`allowed dir: "${dir}" (${real}) is ${broad}, too broad to allow; ${BROAD_HINT}.`);
        continue;
      }
      out.push(real);
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
 * inside a root. Neither → the working directory, unless it is too broad
 * (tooBroad). Client roots that are too broad are ignored the same way.
 * `roots` undefined means the client did not declare roots; [] means it shared none.
 */
/** What to do when the client's roots leave no allowed directory (docs/clients.md, "Roots"). */
const ROOTS_HINT =
  "the user must add a root inside an allowed directory in the client (the MCP Inspector: a roots entry in its configuration or its Roots panel; Claude Code: open the project inside the allowed directory, or add the server at project scope), or set --allowed-dir to a directory that contains the client's roots.";

export function effectiveAllowedDirs(
  configured: string[],
  roots: string[] | undefined,
  cwd: string,
  allowBroad = false,
): AllowedDirs {
  if (roots !== undefined) {
    const usable = allowBroad ? roots : roots.filter((r) => tooBroad(r) === undefined);
    if (usable.length === 0) {
      const why =
        roots.length === 0
          ? "shared none (or none that exists on this machine)"
          : `shared only directories too broad to open (${roots.join(", ")})`;
      return {
        dirs: [],
        problem: `The client declares roots but ${why}, so no local path is allowed.`,
        hint: ROOTS_HINT,
      };
    }
    if (configured.length === 0) return { dirs: usable };
    // Intersection of two sets of directory trees: the deeper of each nested pair.
    const both = new Set<string>();
    for (const c of configured) {
      for (const r of usable) {
        if (isInside(c, r)) both.add(r);
        else if (isInside(r, c)) both.add(c);
      }
    }
    if (both.size === 0) {
      return {
        dirs: [],
        problem: `--allowed-dir is set (${configured.join(", ")}), but the client's roots (${usable.join(", ")}) exclude it: a client that shares roots narrows the allowed directories to what lies in both.`,
        hint: ROOTS_HINT,
      };
    }
    return { dirs: [...both] };
  }
  if (configured.length > 0) return { dirs: configured };
  const real = safeRealpath(cwd);
  const broad = allowBroad ? undefined : tooBroad(real);
  if (broad) {
    return {
      dirs: [],
      problem: `No directory is allowed: the server's working directory is ${real}, which is ${broad}, too broad to open up by default.`,
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
