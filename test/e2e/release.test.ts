/**
 * The release, run exactly as the README runs it (`npm run release`; the
 * release workflow's `bun scripts/build.ts --out release` is checked to be
 * the same build into the same folder): in a fresh copy of
 * the repository (its tracked files as they are now, no build output, no
 * node_modules), with the default, relative output folder. Narrowed to this
 * machine's target with --only (the full run builds all six the same way).
 * The archive, the MCP Bundle, the npm tarballs and server.json come out
 * with one version, and sha256sums.txt covers every file with its digest.
 *
 * Then what users do with those very files: the MCP Bundle (packed by the
 * official mcpb CLI) validates and unpacks, and its command, run as the
 * manifest says with the user's settings filled in, answers an MCP client;
 * the npm tarballs install offline into an empty folder and `npx
 * store-mcp-server` answers --version and tools/list over stdio, SIGTERM
 * reaching the binary through the launcher. (One release serves all three:
 * packing the 144 MB binary again for each was most of their CPU.)
 */
import { beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import pkg from "../../package.json" with { type: "json" };
import { bundleInfo, unpackBundle } from "../../scripts/lib/mcpb.ts";
import { serverJsonProblems } from "../../scripts/lib/server-json.ts";
import { tempDir } from "../helpers/files.ts";
import { schemaErrors } from "../helpers/registry-schema.ts";
import { freshBucket, s3, s3Env } from "../helpers/s3.ts";

const ROOT = resolve(import.meta.dir, "../..");

/** The repository's tracked files as they are in the working tree (what a clone of this commit holds), in a new folder. */
function freshCopy(): string {
  const dir = tempDir("release-clone");
  // `git stash create` makes a commit of the working tree without touching it (empty when nothing changed).
  const stash = Bun.spawnSync(["git", "stash", "create"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(stash.exitCode, stash.stderr.toString()).toBe(0);
  const tree = stash.stdout.toString().trim() || "HEAD";
  const archive = Bun.spawnSync(["bash", "-c", `git archive ${tree} | tar -x -C "${dir}"`], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(archive.exitCode, archive.stderr.toString()).toBe(0);
  return dir;
}

function checkRelease(out: string): void {
  const v = pkg.version;
  const expected = [
    `store-mcp-server-${v}-linux-x64.tar.gz`,
    `store-mcp-server-${v}-linux-x64.mcpb`,
    `npm/store-mcp-server-${v}.tgz`,
    `npm/store-mcp-server-linux-x64-${v}.tgz`,
  ];
  const sums = new Map(
    readFileSync(join(out, "sha256sums.txt"), "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(/\s+/).reverse() as [string, string]),
  );
  expect([...sums.keys()].sort()).toEqual(expected.sort());
  for (const [file, digest] of sums) {
    expect(new Bun.CryptoHasher("sha256").update(readFileSync(join(out, file))).digest("hex"), file).toBe(digest);
  }
  const registry = JSON.parse(readFileSync(join(out, "server.json"), "utf8"));
  expect(serverJsonProblems(registry)).toEqual([]);
  // The registry's own 2025-12-11 schema (the registry refuses 2025-09-29 since that one came).
  expect(schemaErrors(registry)).toEqual([]);
  expect(registry.version).toBe(v);
  expect(registry.packages[0]).toMatchObject({
    registryType: "mcpb",
    fileSha256: sums.get(`store-mcp-server-${v}-linux-x64.mcpb`),
  });
}

let release: string;
let built: ReturnType<typeof Bun.spawnSync>;

beforeAll(() => {
  const dir = freshCopy();
  built = Bun.spawnSync(["npm", "run", "release", "--", "--only", "linux-x64"], {
    cwd: dir,
    stdout: "pipe",
    stderr: "pipe",
  });
  release = join(dir, "release");
}, 300_000);

test("`npm run release` in a fresh copy, into the default release/ folder", () => {
  expect(built.exitCode, built.stderr!.toString().slice(-3000)).toBe(0);
  checkRelease(release);
  // The workflow runs the same build after its own provisioning, into the same relative folder given explicitly
  // (the default): one build here checks both, a second would only repeat it.
  const workflow = readFileSync(join(ROOT, ".github/workflows/release.yml"), "utf8");
  expect(workflow).toContain("run: bun scripts/build.ts --out release");
  expect(readFileSync(join(ROOT, "scripts/build.ts"), "utf8")).toContain(
    'const outDir = resolve(arg("--out") ?? "release");',
  );
  expect(pkg.scripts.release).toBe("bash scripts/provision.sh && bun scripts/build.ts");
});

test("the release's bundle unpacks and its manifest's command, with the user's settings, serves the tools", async () => {
  const bucket = await freshBucket("bundle");
  const out = tempDir("mcpb");
  const file = join(release, `store-mcp-server-${pkg.version}-linux-x64.mcpb`);
  expect(bundleInfo(file)).toContain(`store-mcp-server-${pkg.version}-linux-x64.mcpb`);
  const dir = join(out, "unpacked");
  unpackBundle(file, dir);
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
  expect(manifest).toMatchObject({ name: "store-mcp-server", version: pkg.version, server: { type: "binary" } });
  expect(manifest.user_config.secret_access_key.sensitive).toBe(true);

  // What a desktop client does: fill ${__dirname} and ${user_config.*} in, then start the command.
  const allowed = tempDir("bundle-allowed");
  const settings: Record<string, string> = {
    access_key_id: s3().accessKeyId,
    secret_access_key: s3().secretAccessKey,
    region: s3().region,
    endpoint_url: s3().endpoint,
    allowed_directory: allowed,
    read_only: "true",
  };
  const fill = (v: string) =>
    v.replaceAll("${__dirname}", dir).replace(/\$\{user_config\.(\w+)\}/g, (_, k: string) => settings[k] ?? "");
  const { command, args, env } = manifest.server.mcp_config as {
    command: string;
    args: string[];
    env: Record<string, string>;
  };
  const transport = new StdioClientTransport({
    command: fill(command),
    args: args.map(fill),
    env: { PATH: process.env.PATH ?? "", ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, fill(v)])) },
    stderr: "pipe",
  });
  const client = new Client({ name: "bundle-test", version: "1" });
  await client.connect(transport);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    // read_only: true reached the server; the allowed directory too (get_object download is offered there).
    expect(names).toContain("list_buckets");
    expect(names).not.toContain("upload_file");
    const listed = await client.callTool({ name: "list_buckets", arguments: {} });
    expect(JSON.stringify(listed.structuredContent)).toContain(bucket);
  } finally {
    await client.close();
  }
}, 120_000);

test("the release's npm tarballs: an offline install, then npx store-mcp-server: --version, tools/list, SIGTERM", async () => {
  const tarballs = [
    join(release, "npm", `store-mcp-server-${pkg.version}.tgz`),
    join(release, "npm", `store-mcp-server-linux-x64-${pkg.version}.tgz`),
  ];
  const unpacked = tempDir("npm-launcher");
  expect(Bun.spawnSync(["tar", "-xzf", tarballs[0]!, "-C", unpacked]).exitCode).toBe(0);
  const launcherManifest = JSON.parse(readFileSync(join(unpacked, "package", "package.json"), "utf8"));
  expect(launcherManifest.scripts).toBeUndefined(); // no install scripts
  expect(launcherManifest.optionalDependencies["@store-mcp-server/linux-x64"]).toBe(pkg.version);

  const app = tempDir("npm-app");
  const npmEnv = {
    PATH: process.env.PATH ?? "",
    HOME: app,
    npm_config_cache: join(app, ".npm-cache"),
    npm_config_update_notifier: "false",
  };
  const install = Bun.spawnSync(["npm", "install", "--offline", "--no-audit", "--no-fund", ...tarballs], {
    cwd: app,
    env: npmEnv,
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(install.exitCode, install.stderr.toString()).toBe(0);
  expect(existsSync(join(app, "node_modules/@store-mcp-server/linux-x64/bin/store-mcp-server"))).toBe(true);

  const version = Bun.spawnSync(["npx", "--offline", "store-mcp-server", "--version"], {
    cwd: app,
    env: npmEnv,
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(version.stdout.toString().trim(), version.stderr.toString()).toBe(pkg.version);

  const transport = new StdioClientTransport({
    command: "npx",
    args: ["--offline", "store-mcp-server"],
    cwd: app,
    env: { ...npmEnv, ...s3Env() },
    stderr: "pipe",
  });
  const client = new Client({ name: "npx-test", version: "1" });
  await client.connect(transport);
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("list_buckets");
  } finally {
    await client.close();
  }

  // Signals pass through the launcher: the server exits 0 on SIGTERM, and so does the launcher.
  const launcher = Bun.spawn(["node", join(app, "node_modules/.bin/store-mcp-server")], {
    cwd: app,
    env: { ...npmEnv, ...s3Env() },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  // Once the server has answered (the launcher is up and has started it, however slow the machine), SIGTERM.
  launcher.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
  );
  launcher.stdin.flush();
  const reader = launcher.stdout.getReader();
  for (let said = ""; !said.includes('"result"'); ) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the launcher ended before answering: ${said}`);
    said += new TextDecoder().decode(value);
  }
  launcher.kill("SIGTERM");
  expect(await launcher.exited).toBe(0);
}, 120_000);
