/** The Homebrew formula renderer: valid Ruby, and every URL carries its own archive's sha256. */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseSums, renderFormula } from "../../scripts/homebrew.ts";
import { tempDir } from "../helpers/files.ts";

const sums = readFileSync(resolve(import.meta.dir, "../fixtures/sha256sums.txt"), "utf8");
const formula = renderFormula({ version: "1.2.3", repo: "acme/store-mcp-server", sums });

test("the rendered formula is valid Ruby (ruby -c)", () => {
  const file = join(tempDir("brew"), "store-mcp-server.rb");
  writeFileSync(file, formula);
  const out = Bun.spawnSync(["ruby", "-c", file]);
  expect(out.stderr.toString()).toBe("");
  expect(out.stdout.toString()).toContain("Syntax OK");
});

test("each platform block points at its archive with that archive's sha256", () => {
  const digests = parseSums(sums);
  const pairs = [...formula.matchAll(/url "([^"]+)"\n\s+sha256 "([0-9a-f]{64})"/g)].map((m) => [m[1]!, m[2]!] as const);
  expect(pairs.map(([url]) => url.split("/").pop())).toEqual([
    "store-mcp-server-1.2.3-darwin-arm64.tar.gz",
    "store-mcp-server-1.2.3-darwin-x64.tar.gz",
    "store-mcp-server-1.2.3-linux-arm64.tar.gz",
    "store-mcp-server-1.2.3-linux-x64.tar.gz",
  ]);
  for (const [url, sha] of pairs) {
    expect(url.startsWith("https://github.com/acme/store-mcp-server/releases/download/v1.2.3/")).toBe(true);
    expect(sha).toBe(digests.get(url.split("/").pop()!)!);
  }
  // Blocks nest as Homebrew expects: on_macos/on_linux, each with on_arm/on_intel.
  expect(formula).toMatch(
    /on_macos do\n\s+on_arm do[\s\S]+?on_intel do[\s\S]+?on_linux do\n\s+on_arm do[\s\S]+?on_intel do/,
  );
  expect(formula).toContain('assert_match version.to_s, shell_output("#{bin}/store-mcp-server --version")');
  expect(formula).toContain('bin.install "store-mcp-server"');
});

test("a missing archive or a malformed repo is refused, not rendered", () => {
  const withoutArm = sums
    .split("\n")
    .filter((l) => !l.includes("darwin-arm64"))
    .join("\n");
  expect(() => renderFormula({ version: "1.2.3", repo: "acme/store-mcp-server", sums: withoutArm })).toThrow(
    "darwin-arm64",
  );
  expect(() => renderFormula({ version: "1.2.3", repo: "not a repo", sums })).toThrow("owner/name");
});
