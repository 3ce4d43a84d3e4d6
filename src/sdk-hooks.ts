/**
 * Two adjustments the MCP SDK offers no option for, made at its request
 * handlers (the SDK version is pinned in bun.lock; the tests through the
 * binary fail if its handler table moves). 2. is below.
 *
 * 1. Null arguments. Clients built on strict function calling (OpenAI's, and code on top of it)
 * make every parameter required-but-nullable and send `null` for the ones
 * they do not use. For every tool, a top-level `null` argument means "not
 * given": it is dropped before the arguments meet the tool's schema, so the
 * advertised schemas stay as they are.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { builtToolJsonSchemas } from "./tools/json-schemas.macro.ts" with { type: "macro" };
import type { ToolDefinition } from "./tools/types.ts";

const BUILT_SCHEMAS = builtToolJsonSchemas();

type Handler = (request: { params?: { arguments?: unknown } }, extra: unknown) => unknown;

/** A top-level null argument means "not given". */
export function withoutNulls(args: unknown): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return args;
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null));
}

/** Replaces the SDK's handler for `method` with `wrap(original)`. */
function wrapHandler(mcp: McpServer, method: string, wrap: (original: Handler) => Handler): void {
  const handlers = (mcp.server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  const original = handlers?.get(method);
  if (!handlers || !original) throw new Error(`the MCP SDK's ${method} handler was not found`);
  handlers.set(method, wrap(original));
}

export function installSdkHooks(mcp: McpServer, tools: readonly ToolDefinition[]): void {
  wrapHandler(mcp, "tools/call", (original) => (request, extra) =>
    original({ ...request, params: request.params && { ...request.params, arguments: withoutNulls(request.params.arguments) } }, extra),
  );
  // 2. tools/list from schemas converted and compacted when the binary was built (tools/json-schemas.ts),
  // for the tools this configuration offers, in their order; what the SDK would send, less its noise.
  wrapHandler(mcp, "tools/list", () => async () => ({
    tools: tools.map((t) => ({ name: t.name, title: t.title, description: t.description, ...BUILT_SCHEMAS[t.name]!, annotations: t.annotations })),
  }));
}
