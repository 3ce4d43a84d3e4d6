/**
 * The npm distribution, for users who have Node: `npx -y store-mcp-server`.
 * The esbuild/biome pattern: a small launcher package with one optional
 * dependency per platform, each carrying that platform's compiled binary
 * (npm installs only the one whose os/cpu match). No install scripts, nothing
 * downloaded at install time: the launcher finds its platform's binary and
 * execs it with stdio inherited and signals forwarded.
 */
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };

export const SCOPE = "@store-mcp-server";

/** npm's os/cpu names per release target (linux-x64-baseline shares linux-x64's name and is not published to npm). */
export const NPM_TARGETS: Record<string, { os: string; cpu: string }> = {
  "linux-x64": { os: "linux", cpu: "x64" },
  "linux-arm64": { os: "linux", cpu: "arm64" },
  "darwin-x64": { os: "darwin", cpu: "x64" },
  "darwin-arm64": { os: "darwin", cpu: "arm64" },
  "windows-x64": { os: "win32", cpu: "x64" },
};

const common = { version: pkg.version, license: pkg.license, repository: pkg.repository, description: pkg.description };

/** The launcher: resolves the platform package's binary and runs it as if it were this process. */
const LAUNCHER = `#!/usr/bin/env node
// Runs the store-mcp-server binary of this platform's package (installed as an optional dependency).
"use strict";
const { spawn } = require("node:child_process");
const platform = { win32: "windows" }[process.platform] || process.platform;
const name = "${SCOPE}/" + platform + "-" + process.arch;
let binary;
try {
  binary = require.resolve(name + "/bin/store-mcp-server" + (process.platform === "win32" ? ".exe" : ""));
} catch {
  process.stderr.write("store-mcp-server: no binary for " + process.platform + "-" + process.arch + " (" + name + " is not installed; it is an optional dependency: reinstall without --no-optional, or use a release binary)\\n");
  process.exit(1);
}
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("error", (err) => {
  process.stderr.write("store-mcp-server: cannot start " + binary + ": " + err.message + "\\n");
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (!signal) process.exit(code ?? 1);
  // Die of the same signal (our own handler would only pass it on again).
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
});
`;

/** Writes the launcher package into `dir`. */
export function writeLauncherPackage(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "bin", "store-mcp-server.js"), LAUNCHER);
  chmodSync(join(dir, "bin", "store-mcp-server.js"), 0o755);
  const optionalDependencies = Object.fromEntries(Object.keys(NPM_TARGETS).map((t) => [`${SCOPE}/${t}`, pkg.version]));
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ name: pkg.name, ...common, bin: { "store-mcp-server": "bin/store-mcp-server.js" }, files: ["bin"], optionalDependencies, engines: { node: ">=18" } }, null, 2)}\n`,
  );
  writeFileSync(
    join(dir, "README.md"),
    `# store-mcp-server\n\n${pkg.description}. \`npx -y store-mcp-server\` runs the compiled binary for this platform (from the ${SCOPE}/<platform> package); see the project's README for configuration.\n`,
  );
}

/** Writes the package carrying `binary` for `target` into `dir`. */
export function writePlatformPackage(dir: string, target: string, binary: string): void {
  const { os, cpu } = NPM_TARGETS[target]!;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "bin"), { recursive: true });
  const exe = os === "win32" ? "store-mcp-server.exe" : "store-mcp-server";
  copyFileSync(binary, join(dir, "bin", exe));
  chmodSync(join(dir, "bin", exe), 0o755);
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ name: `${SCOPE}/${target}`, ...common, description: `The store-mcp-server binary for ${os}-${cpu}`, os: [os], cpu: [cpu], files: ["bin"], preferUnplugged: true }, null, 2)}\n`,
  );
}

/**
 * `npm pack` of a package directory into `outDir`; returns the tarball's
 * path. npm runs in `dir`, so both paths are made absolute first (a relative
 * `release/npm` was looked for inside the staged package); on failure, npm's
 * own words are shown (--json keeps stdout parseable without --silent,
 * which also silenced the errors).
 */
export function npmPack(dir: string, outDir: string): string {
  const destination = resolve(outDir);
  const out = Bun.spawnSync(["npm", "pack", "--json", "--pack-destination", destination], {
    cwd: resolve(dir),
    stdout: "pipe",
    stderr: "pipe",
  });
  if (out.exitCode !== 0)
    throw new Error(
      `npm pack in ${dir} failed (exit ${out.exitCode}): ${out.stderr.toString().trim() || out.stdout.toString().trim() || "npm printed nothing"}`,
    );
  const [packed] = JSON.parse(out.stdout.toString()) as { filename: string }[];
  return join(destination, packed!.filename);
}

/** Both kinds of package for the targets built, packed into `outDir/npm`. */
export function packNpm(binaries: Record<string, string>, outDir: string): string[] {
  const npmDir = join(outDir, "npm");
  mkdirSync(npmDir, { recursive: true });
  const stage = join(outDir, "npm-stage");
  const tarballs: string[] = [];
  writeLauncherPackage(join(stage, "launcher"));
  tarballs.push(npmPack(join(stage, "launcher"), npmDir));
  for (const [target, binary] of Object.entries(binaries)) {
    if (!NPM_TARGETS[target]) continue;
    writePlatformPackage(join(stage, target), target, binary);
    tarballs.push(npmPack(join(stage, target), npmDir));
  }
  rmSync(stage, { recursive: true, force: true });
  return tarballs;
}
