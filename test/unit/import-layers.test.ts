/**
 * The shape of the house, read from the code's own imports (types included):
 * no file imports one from a higher layer, and no import cycle exists, by
 * the layer order docs/architecture.md gives. A small script over the import
 * graph (every `import`/`export … from`, `import("…")` and `typeof import("…")` of src/): madge and dependency-cruiser
 * resolve through Node or TypeScript's resolver and bring a dependency tree
 * for what forty lines do here.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../../src");

/** Highest first: a file may import its own layer's files and those of layers below it. */
export const LAYERS: readonly (readonly string[])[] = [
  ["main.ts", "startup", "doctor"],
  ["transports", "auth"],
  ["mcp"],
  ["access"],
  ["tool-registry", "tools", "tool-kit", "prompts"],
  ["bulk", "content"],
  ["storage", "local"],
  ["config"],
  ["runtime"],
];

const rankOf = (file: string) => {
  const top = file.split("/")[0]!;
  const rank = LAYERS.findIndex((layer) => layer.includes(top));
  if (rank < 0) throw new Error(`${file}: its folder ${top} is in no layer of LAYERS (docs/architecture.md)`);
  return rank;
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Each source file (relative to src/) and the src/ files it imports. */
export function importGraph(root = SRC): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of sources(root)) {
    const text = readFileSync(path, "utf8");
    const named = [
      ...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/gms),
      ...text.matchAll(/\bimport\(\s*"(\.[^"]+)"\s*\)/g),
    ];
    const targets = named.map((m) => relative(root, resolve(dirname(path), m[1]!)));
    // Files outside src/ (the view's build, package.json) are not layers of the server.
    graph.set(
      relative(root, path),
      targets.filter((t) => t.endsWith(".ts") && !t.startsWith("..")),
    );
  }
  return graph;
}

export function upwardImports(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([file, targets]) =>
    targets.filter((t) => rankOf(t) < rankOf(file)).map((t) => `${file} → ${t}`),
  );
}

export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") {
      found.push([...path.slice(path.indexOf(file)), file]);
      return;
    }
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    path.pop();
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) visit(file);
  return found;
}

test("the graph holds imports made at run time and type imports written as typeof import(…)", () => {
  const graph = importGraph();
  expect(graph.get("main.ts")).toContain("startup/cli.ts");
  expect(graph.get("startup/cli.ts")).toContain("transports/remote.ts");
  expect(graph.get("mcp/tool-registration.ts")).toContain("tool-registry/loaders.ts");
});

test("no import runs up a layer", () => {
  expect(upwardImports(importGraph())).toEqual([]);
});

test("no two files import each other, directly or around a circle", () => {
  expect(cycles(importGraph()).map((c) => c.join(" → "))).toEqual([]);
});

test("the check can fail: a planted upward import and a planted circle are found", () => {
  const graph = new Map([
    ["storage/a.ts", ["tools/b.ts"]],
    ["tools/b.ts", ["storage/a.ts"]],
  ]);
  expect(upwardImports(graph)).toEqual(["storage/a.ts → tools/b.ts"]);
  expect(cycles(graph)).toEqual([["storage/a.ts", "tools/b.ts", "storage/a.ts"]]);
});
