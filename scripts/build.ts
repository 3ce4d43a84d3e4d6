/**
 * Release build: compiles every target with the same options as the local
 * build, packs store-mcp-server-<version>-<os>-<arch>.(tar.gz|zip) and an MCP
 * Bundle (.mcpb) per target, writes sha256sums.txt, and smoke-tests the host binary (and linux-arm64 under
 * qemu-user when it is installed).
 *   bun scripts/build.ts [--only linux-x64,linux-arm64] [--out release]
 */
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { compile } from "./lib/compile.ts";
import { packBundle } from "./lib/mcpb.ts";
import { packNpm } from "./lib/npm-packages.ts";
import { serverJson, serverJsonProblems } from "./lib/server-json.ts";

export const TARGETS = [
  { name: "linux-x64", bun: "bun-linux-x64", archive: "tar.gz" },
  { name: "linux-x64-baseline", bun: "bun-linux-x64-baseline", archive: "tar.gz" },
  { name: "linux-arm64", bun: "bun-linux-arm64", archive: "tar.gz" },
  { name: "darwin-x64", bun: "bun-darwin-x64", archive: "tar.gz" },
  { name: "darwin-arm64", bun: "bun-darwin-arm64", archive: "tar.gz" },
  { name: "windows-x64", bun: "bun-windows-x64", archive: "zip" },
] as const;

const arg = (flag: string) => {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
// Absolute from here on: tools below run in other folders (npm pack in each staged package, zip and tar in stages).
const outDir = resolve(arg("--out") ?? "release");
const only = arg("--only")?.split(",");
const targets = TARGETS.filter((t) => !only || only.includes(t.name));

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
const sums: string[] = [];
const bundleSha256: Record<string, string> = {};
const binaries: Record<string, string> = {};
for (const target of targets) {
  const started = performance.now();
  const stage = join(outDir, `stage-${target.name}`);
  const exe = join(stage, target.name.startsWith("windows") ? "store-mcp-server.exe" : "store-mcp-server");
  await compile({ outfile: exe, target: target.bun });
  const archive = `store-mcp-server-${pkg.version}-${target.name}.${target.archive}`;
  const pack =
    target.archive === "zip"
      ? Bun.spawnSync(["zip", "-q", "-j", join("..", archive), exe.split("/").pop()!], { cwd: stage })
      : Bun.spawnSync(["tar", "-czf", join("..", archive), "-C", ".", exe.split("/").pop()!], { cwd: stage });
  if (pack.exitCode !== 0) throw new Error(`packing ${archive} failed: ${pack.stderr.toString()}`);
  const digest = new Bun.CryptoHasher("sha256")
    .update(await Bun.file(join(outDir, archive)).arrayBuffer())
    .digest("hex");
  sums.push(`${digest}  ${archive}`);
  // The same binary as an MCP Bundle, for one-click installs in desktop clients.
  const bundle = packBundle(exe, target.name, outDir);
  const bundleDigest = new Bun.CryptoHasher("sha256").update(await Bun.file(bundle).arrayBuffer()).digest("hex");
  bundleSha256[bundle.split("/").pop()!] = bundleDigest;
  sums.push(`${bundleDigest}  ${bundle.split("/").pop()}`);
  binaries[target.name] = exe;
  process.stderr.write(`${archive}: ${Math.round(performance.now() - started)} ms\n`);
}
// npm: the launcher and one package per platform (npx -y store-mcp-server); the registry's server.json.
for (const tarball of packNpm(binaries, outDir)) {
  sums.push(
    `${new Bun.CryptoHasher("sha256").update(await Bun.file(tarball).arrayBuffer()).digest("hex")}  npm/${tarball.split("/").pop()}`,
  );
}
const registry = serverJson(bundleSha256);
const problems = serverJsonProblems(registry);
if (problems.length) throw new Error(`server.json: ${problems.join("; ")}`);
await Bun.write(join(outDir, "server.json"), `${JSON.stringify(registry, null, 2)}\n`);
await Bun.write(join(outDir, "sha256sums.txt"), `${sums.join("\n")}\n`);

// Smoke tests: --version, and an MCP initialize + tools/list answered.
const smoke = (cmd: string[]): string => {
  const version = Bun.spawnSync([...cmd, "--version"])
    .stdout.toString()
    .trim();
  if (version !== pkg.version) throw new Error(`${cmd.join(" ")} --version printed "${version}"`);
  const input =
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "smoke", version: "1" } },
    }) +
    "\n" +
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) +
    "\n" +
    JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) +
    "\n";
  const run = Bun.spawnSync(cmd, {
    stdin: new TextEncoder().encode(input),
    env: { PATH: process.env.PATH ?? "" },
    timeout: 30_000,
  });
  const list = run.stdout
    .toString()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((m) => m.id === 2);
  const names: string[] = list?.result?.tools?.map((t: { name: string }) => t.name) ?? [];
  const spec = ["list_buckets", "list_objects", "upload_file", "get_object", "create_bucket", "delete_bucket"];
  if (!spec.every((n) => names.includes(n)))
    throw new Error(`${cmd.join(" ")}: tools/list did not answer the six spec tools (got ${names.join(", ")})`);
  return `${cmd.join(" ")}: ok`;
};
const hostTarget = `${process.platform}-${process.arch}`;
if (targets.some((t) => t.name === hostTarget))
  process.stderr.write(`${smoke([join(outDir, `stage-${hostTarget}`, "store-mcp-server")])}\n`);
const qemu = Bun.which("qemu-aarch64");
if (qemu && targets.some((t) => t.name === "linux-arm64")) {
  process.stderr.write(
    `${smoke([qemu, "-L", "/usr/aarch64-linux-gnu", join(outDir, "stage-linux-arm64", "store-mcp-server")])}\n`,
  );
}
for (const target of targets) rmSync(join(outDir, `stage-${target.name}`), { recursive: true, force: true });
process.stderr.write(
  `wrote ${targets.length} archive(s), ${targets.length} bundle(s) and sha256sums.txt to ${outDir}/\n`,
);
