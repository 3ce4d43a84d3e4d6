/**
 * The tools/list answer, made from the tools' cards and the JSON Schemas
 * built into the binary (tool-registry/json-schemas.ts), without the MCP SDK: the
 * SDK's tools/list handler answers with it (sdk-hooks.ts), and so does the
 * stdio start before the SDK is loaded (startup/early-answers.ts).
 */

import { advertisedAnnotations } from "../tool-kit/annotations.ts";
import type { ToolCard } from "../tool-kit/types.ts";
import { builtToolJsonSchemas } from "../tool-registry/json-schemas.macro.ts" with { type: "macro" };
import { TOOL_UI_META, VIEW_TOOLS } from "./object-browser.ts";
import { SOURCE_STORE_TEXT, storeParameterText } from "./stores.ts";

const BUILT_SCHEMAS = builtToolJsonSchemas();
const TASK_OPTIONAL = { taskSupport: "optional" } as const;

/** A built input schema with the `store` argument of a server with several stores (stores.ts: the same enum and text). */
function withStoreProperty(
  schemas: (typeof BUILT_SCHEMAS)[string],
  stores: string[],
  tool: ToolCard,
): (typeof BUILT_SCHEMAS)[string] {
  const input = schemas.inputSchema as { properties?: Record<string, unknown> };
  const store = { type: "string", enum: stores, description: storeParameterText(stores), nullable: true };
  const source = tool.sourceStore
    ? { source_store: { type: "string", enum: stores, description: SOURCE_STORE_TEXT, nullable: true } }
    : {};
  return { ...schemas, inputSchema: { ...input, properties: { ...input.properties, store, ...source } } };
}

/**
 * The per-tool-list work (each tool's parameters, the tools/list answer),
 * made once per distinct list: remote mode builds a server per request, and
 * redoing it would be the largest share of a request's CPU (BENCH_ONLY=team).
 */
const prepared = new Map<string, { listed: unknown[] }>();

/**
 * The tools/list answer for these tools (and stores): the same object for every server with this list. With `tasks`,
 * the tools whose calls can run long say a client may ask for a task (2025-11-25's `execution`; the 2026-07-28 codec
 * drops it, and there a tools/call says whether the client takes tasks).
 */
export function listedTools(tools: readonly ToolCard[], stores: string[] | undefined, tasks = false): unknown[] {
  // A list is its tools' names and descriptions (a remote note changes one), the stores, and whether tasks are served.
  const key = `${tools.map((t) => `${t.name}:${t.description.length}`).join(",")}|${stores?.join(",") ?? ""}|${tasks}`;
  let found = prepared.get(key);
  if (!found) {
    // tools/list from schemas converted and compacted when the binary was built (tool-registry/json-schemas.ts),
    // for the tools this configuration offers, in their order; what the SDK would send, less its noise.
    // No `title`: each one is its name in words ("list_jobs", "List jobs"), and a client shows the name where there
    // is none; together they cost the list 900 bytes of every client's context (test/e2e/tool-list-budget.test.ts).
    const listed = tools.map((t) => ({
      name: t.name,
      description: t.description,
      ...(stores && !t.storeless ? withStoreProperty(BUILT_SCHEMAS[t.name]!, stores, t) : BUILT_SCHEMAS[t.name]!),
      annotations: advertisedAnnotations(t.annotations),
      ...(tasks && t.handsBack ? { execution: TASK_OPTIONAL } : {}),
      ...(VIEW_TOOLS.has(t.name) ? { _meta: TOOL_UI_META } : {}),
    }));
    found = { listed };
    // Few distinct lists exist (one per policy grant and configuration); bounded all the same.
    if (prepared.size >= 256) prepared.clear();
    prepared.set(key, found);
  }
  return found.listed;
}
