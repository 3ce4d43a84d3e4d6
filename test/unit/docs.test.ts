/**
 * The docs stay true to the code and to each other: every link in README.md
 * and docs/ reaches a file and, with an anchor, a heading in it (GitHub's
 * slugs); every option and STORE_* variable the code reads is in the
 * configuration reference; every tool is in the README's table; the README
 * stays short.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ARGS } from "../../src/config/cli-options.ts";
import { EVERY_TOOL } from "../../src/tool-registry/index.ts";

const ROOT = resolve(import.meta.dir, "../..");
const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const read = (page: string) => readFileSync(join(ROOT, page), "utf8");

/** Text outside fenced code blocks (a `#` comment in a shell block is not a heading, a `[x](y)` in code not a link). */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split("\n").filter((line) => {
    if (line.startsWith("```")) fenced = !fenced;
    return !fenced && !line.startsWith("```");
  });
}

/** GitHub's heading anchors: lowercase, punctuation dropped, spaces as hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (!heading) continue;
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, "")
      .replaceAll(" ", "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

test("every link in the README and docs/ reaches its file and heading", () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    for (const line of prose(read(page))) {
      for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue; // https:, mailto:
        checked++;
        const [path, anchor] = target!.split("#") as [string, string | undefined];
        const file = path ? join(dirname(join(ROOT, page)), path) : join(ROOT, page);
        if (!existsSync(file)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor !== undefined && file.endsWith(".md") && !anchorsOf(readFileSync(file, "utf8")).has(anchor))
          broken.push(`${page}: ${target} (no such heading)`);
      }
    }
  }
  expect(broken).toEqual([]);
  expect(checked).toBeGreaterThan(40);
});

test("the check can fail: a heading's anchor is GitHub's, a missing one is not there", () => {
  const anchors = anchorsOf(
    "# Identity pass-through: the store's own permissions, per person\n## Tools\n## Tools\n```sh\n# not a heading\n```",
  );
  expect([...anchors]).toEqual(["identity-pass-through-the-stores-own-permissions-per-person", "tools", "tools-1"]);
});

test("the configuration reference names every option and every STORE_* variable the code reads", () => {
  const reference = read("docs/configuration.md");
  const missing = Object.keys(ARGS).filter((name) => !reference.includes(`--${name}`));
  const source = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(join(ROOT, "src", f), "utf8"))
    .join("\n");
  const variables = new Set([...source.matchAll(/["`](STORE_[A-Z0-9_]+[A-Z0-9])["`]/g)].map((m) => m[1]!));
  expect(variables.size).toBeGreaterThan(30);
  for (const variable of variables) if (!reference.includes(variable)) missing.push(variable);
  expect(missing).toEqual([]);
});

test("the README lists every tool, and stays a page a newcomer reads in five minutes", () => {
  const readme = read("README.md");
  for (const tool of EVERY_TOOL) expect(readme).toContain(`| \`${tool.name}\` |`);
  expect(readme.split("\n").length).toBeLessThanOrEqual(250);
});
