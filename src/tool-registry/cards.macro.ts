/** Runs at build (and transpile) time: `import … with { type: "macro" }` inlines the result as a literal. */
import { cardOf } from "../tool-kit/card-of.ts";
import type { ToolCard } from "../tool-kit/types.ts";
import { ALL_TOOLS, EVERY_TOOL, JOB_TOOLS, STORE_TOOLS } from "./index.ts";

export function builtToolCards(): { every: ToolCard[]; all: string[]; stores: string[]; jobs: string[] } {
  return {
    every: EVERY_TOOL.map(cardOf),
    all: ALL_TOOLS.map((t) => t.name),
    stores: STORE_TOOLS.map((t) => t.name),
    jobs: JOB_TOOLS.map((t) => t.name),
  };
}
