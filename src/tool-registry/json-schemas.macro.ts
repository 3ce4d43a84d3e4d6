/** Runs at build (and transpile) time: `import … with { type: "macro" }` inlines the result as a literal. */
import { EVERY_TOOL } from "./index.ts";
import { type ToolJsonSchemas, toolJsonSchemas } from "./json-schemas.ts";

export function builtToolJsonSchemas(): Record<string, ToolJsonSchemas> {
  return toolJsonSchemas(EVERY_TOOL);
}
