/**
 * Puts the query engine (DuckDB's native binding and library, for the target's
 * platform) inside the compiled executable. @duckdb/node-bindings picks its
 * platform package with a `require` per platform, which the bundler cannot
 * follow for the packages not installed, and its binding loads a 68 MB
 * library from beside itself; so the build replaces that module with one that
 * imports the target's two files, zstd-compressed, as embedded files, and
 * loads them through src/content/query/native-engine.ts when the first query
 * runs. The host's package comes from node_modules; another platform's is
 * fetched with `npm pack` and checked against the integrity bun.lock records.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { BunPlugin } from "bun";

const ROOT = resolve(import.meta.dir, "../..");
const CACHE = join(ROOT, "node_modules", ".cache", "store-mcp-server-duckdb");
const NOT_ENGINE = new Set(["package.json", "README.md", "LICENSE"]);

/** DuckDB's name for the platform of a bun compile target (the host's when omitted). */
export function enginePlatform(target?: string): string {
  if (!target) return `${process.platform}-${process.arch}`;
  const [, os, arch] = /^bun-(linux|darwin|windows)-(x64|arm64)/.exec(target) ?? [];
  if (!os || !arch) throw new Error(`no query engine is known for the target ${target}`);
  return `${os === "windows" ? "win32" : os}-${arch}`;
}

function bindingsVersion(): string {
  return JSON.parse(readFileSync(join(ROOT, "node_modules/@duckdb/node-bindings/package.json"), "utf8")).version;
}

/** The integrity bun.lock records for a package: the tarball fetched must match it. */
function lockedIntegrity(name: string, version: string): string {
  const lock = readFileSync(join(ROOT, "bun.lock"), "utf8");
  const line = lock.split("\n").find((l) => l.includes(`"${name}@${version}"`));
  const integrity = line && /"(sha512-[A-Za-z0-9+/=]+)"/.exec(line)?.[1];
  if (!integrity) throw new Error(`bun.lock has no integrity for ${name}@${version}`);
  return integrity;
}

function run(cmd: string[], cwd: string): string {
  const r = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed: ${r.stderr.toString().slice(-2000)}`);
  return r.stdout.toString();
}

/** The platform package's folder: installed, or fetched from the registry and checked. */
function packageDir(platform: string, version: string): string {
  const name = `@duckdb/node-bindings-${platform}`;
  const installed = join(ROOT, "node_modules", name);
  if (existsSync(join(installed, "duckdb.node"))) return installed;
  const dir = join(CACHE, `${platform}-${version}`, "package");
  if (existsSync(join(dir, "duckdb.node"))) return dir;
  const work = join(CACHE, `${platform}-${version}`);
  mkdirSync(work, { recursive: true });
  const file = run(["npm", "pack", `${name}@${version}`, "--silent", "--pack-destination", work], work)
    .trim()
    .split("\n")
    .pop()!;
  const tarball = readFileSync(join(work, file));
  const got = `sha512-${new Bun.CryptoHasher("sha512").update(tarball).digest("base64")}`;
  const want = lockedIntegrity(name, version);
  if (got !== want) throw new Error(`${name}@${version} from the registry is ${got}, bun.lock says ${want}`);
  run(["tar", "-xzf", file], work);
  return dir;
}

/** Each file of the pair compressed once per machine (zstd level 3: 70 → 22 MB in ~0.3 s; level 19 saves 4 MB more in 17 s). */
function compressed(platform: string, version: string): { name: string; path: string; size: number }[] {
  const dir = packageDir(platform, version);
  const names = readdirSync(dir).filter((n) => !NOT_ENGINE.has(n));
  if (!names.includes("duckdb.node") || names.length !== 2)
    throw new Error(`${dir} should hold duckdb.node and one library, not ${names.join(", ")}`);
  const out = join(CACHE, `${platform}-${version}`, "zst");
  mkdirSync(out, { recursive: true });
  return ["duckdb.node", ...names.filter((n) => n !== "duckdb.node")].map((name) => {
    const size = statSync(join(dir, name)).size;
    const path = join(out, `${name}.${size}.zst`);
    if (!existsSync(path)) writeFileSync(path, Bun.zstdCompressSync(readFileSync(join(dir, name)), { level: 3 }));
    return { name, path, size };
  });
}

/** The build plugin: @duckdb/node-bindings becomes the embedded pair for `target`. */
export function duckdbEmbed(target?: string): BunPlugin {
  const platform = enginePlatform(target);
  const version = bindingsVersion();
  const files = compressed(platform, version);
  const loader = join(ROOT, "src/content/query/native-engine.ts");
  const id = `${version}-${platform}-${new Bun.CryptoHasher("sha256")
    .update(files.map((f) => `${f.name}:${f.size}`).join(","))
    .digest("hex")
    .slice(0, 12)}`;
  const source = [
    `import { loadEmbeddedEngine } from ${JSON.stringify(loader)};`,
    ...files.map((f, i) => `import f${i} from ${JSON.stringify(f.path)} with { type: "file" };`),
    `const binding = loadEmbeddedEngine({ id: ${JSON.stringify(id)}, files: [${files.map((f, i) => `{ name: ${JSON.stringify(f.name)}, path: f${i}, size: ${f.size} }`).join(", ")}] });`,
    // node-api requires this module through __importDefault: a namespace marked __esModule hands over its default.
    "export const __esModule = true;",
    "export default binding;",
  ].join("\n");
  return {
    name: "duckdb-embed",
    setup(build) {
      build.onResolve({ filter: /^@duckdb\/node-bindings$/ }, () => ({
        path: "embedded-engine",
        namespace: "duckdb-embed",
      }));
      build.onLoad({ filter: /.*/, namespace: "duckdb-embed" }, () => ({ contents: source, loader: "js" }));
    },
  };
}
