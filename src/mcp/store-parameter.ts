/**
 * The `store` (and a copy's `source_store`) parameter a tool takes with
 * several stores, as zod schemas for registration. Apart from stores.ts so
 * that what tools/list needs (the texts, in stores.ts) loads without zod.
 */
import { z } from "zod";
import type { ToolDefinition } from "../tool-kit/types.ts";
import { SOURCE_STORE_TEXT, storeParameterText } from "./stores.ts";

/** The `store` argument every tool takes when there are several stores. */
export function storeParameter(names: string[]) {
  return z
    .enum(names as [string, ...string[]])
    .optional()
    .describe(storeParameterText(names));
}

/** The `source_store` argument of the copy tools with several stores. */
export function sourceStoreParameter(names: string[]) {
  return z
    .enum(names as [string, ...string[]])
    .optional()
    .describe(SOURCE_STORE_TEXT);
}

/** A tool that also takes `store` (and a copy tool `source_store`): the server picks the stores; the handler never sees the arguments. */
export function withStoreParameter(tool: ToolDefinition, names: string[]): ToolDefinition {
  if (tool.storeless) return tool;
  // Made once per tool and set of stores: remote mode builds a server per request.
  const key = names.join(",");
  let byStores = withStores.get(tool);
  if (!byStores) withStores.set(tool, (byStores = new Map()));
  let found = byStores.get(key);
  if (!found)
    byStores.set(
      key,
      (found = {
        ...tool,
        inputSchema: tool.inputSchema.extend({
          store: storeParameter(names),
          ...(tool.sourceStore ? { source_store: sourceStoreParameter(names) } : {}),
        }),
      }),
    );
  return found;
}
const withStores = new WeakMap<ToolDefinition, Map<string, ToolDefinition>>();
