import { expect, test } from "bun:test";
import { EVERY_TOOL, jobShape } from "../../../src/tool-registry/index.ts";
import { loadJobShape, TOOL_LOADERS } from "../../../src/tool-registry/loaders.ts";

test("a loader for every tool index.ts lists, and no other; each gives that tool's own definition", async () => {
  expect(Object.keys(TOOL_LOADERS).sort()).toEqual(EVERY_TOOL.map((t) => t.name).sort());
  for (const tool of EVERY_TOOL) expect(await TOOL_LOADERS[tool.name]!()).toBe(tool);
  expect(await loadJobShape()).toBe(jobShape);
});
