/**
 * `npm run release` for this machine's target (the full run builds all six
 * the same way): the archive, the MCP Bundle, the npm tarballs and
 * server.json come out with one version, and sha256sums.txt covers every
 * file with its real digest.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { serverJsonProblems } from "../../scripts/lib/server-json.ts";
import { tempDir } from "../helpers/files.ts";

test("the release build writes archive, bundle, npm tarballs and server.json with matching versions and checksums", async () => {
  const out = tempDir("release");
  const build = Bun.spawnSync([process.execPath, resolve(import.meta.dir, "../../scripts/build.ts"), "--only", "linux-x64", "--out", out], { cwd: resolve(import.meta.dir, "../.."), stdout: "pipe", stderr: "pipe" });
  expect(build.exitCode, build.stderr.toString()).toBe(0);
  const v = pkg.version;
  const expected = [`store-mcp-server-${v}-linux-x64.tar.gz`, `store-mcp-server-${v}-linux-x64.mcpb`, `npm/store-mcp-server-${v}.tgz`, `npm/store-mcp-server-linux-x64-${v}.tgz`];
  const sums = new Map(readFileSync(join(out, "sha256sums.txt"), "utf8").trim().split("\n").map((l) => l.split(/\s+/).reverse() as [string, string]));
  expect([...sums.keys()].sort()).toEqual(expected.sort());
  for (const [file, digest] of sums) {
    expect(new Bun.CryptoHasher("sha256").update(await Bun.file(join(out, file)).arrayBuffer()).digest("hex"), file).toBe(digest);
  }
  const registry = JSON.parse(readFileSync(join(out, "server.json"), "utf8"));
  expect(serverJsonProblems(registry)).toEqual([]);
  expect(registry.version).toBe(v);
  expect(registry.packages[0]).toMatchObject({ registryType: "mcpb", fileSha256: sums.get(`store-mcp-server-${v}-linux-x64.mcpb`) });
}, 180_000);
