/**
 * The release, run exactly as the README runs it (`npm run release`; the
 * release workflow's `bun scripts/build.ts --out release` is checked to be
 * the same build into the same folder): in a fresh copy of
 * the repository (its tracked files as they are now, no build output, no
 * node_modules), with the default, relative output folder. Narrowed to this
 * machine's target with --only (the full run builds all six the same way).
 * The archive, the MCP Bundle, the npm tarballs and server.json come out
 * with one version, and sha256sums.txt covers every file with its digest.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { serverJsonProblems } from "../../scripts/lib/server-json.ts";
import { tempDir } from "../helpers/files.ts";

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
  expect(registry.version).toBe(v);
  expect(registry.packages[0]).toMatchObject({
    registryType: "mcpb",
    fileSha256: sums.get(`store-mcp-server-${v}-linux-x64.mcpb`),
  });
}

test("`npm run release` in a fresh copy, into the default release/ folder", () => {
  const dir = freshCopy();
  const run = Bun.spawnSync(["npm", "run", "release", "--", "--only", "linux-x64"], {
    cwd: dir,
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(run.exitCode, run.stderr.toString().slice(-3000)).toBe(0);
  checkRelease(join(dir, "release"));
  // The workflow runs the same build after its own provisioning, into the same relative folder given explicitly
  // (the default): one build here checks both, a second would only repeat it.
  const workflow = readFileSync(join(ROOT, ".github/workflows/release.yml"), "utf8");
  expect(workflow).toContain("run: bun scripts/build.ts --out release");
  expect(readFileSync(join(ROOT, "scripts/build.ts"), "utf8")).toContain(
    'const outDir = resolve(arg("--out") ?? "release");',
  );
  expect(pkg.scripts.release).toBe("bash scripts/provision.sh && bun scripts/build.ts");
}, 300_000);
