/**
 * Two adjustments the MCP SDK offers no option for, made at its request
 * handlers (the SDK version is pinned in bun.lock; the tests through the
 * binary fail if its handler table moves).
 *
 * 1. Null arguments. Clients built on strict function calling (OpenAI's, and code on top of it)
 * make every parameter required-but-nullable and send `null` for the ones
 * they do not use. For every tool, a top-level `null` argument means "not
 * given": it is dropped before the arguments meet the tool's schema, so the
 * advertised schemas stay as they are.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

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

/**
 * What every conversation pays for, without what it says nothing by: `$schema`
 * (some providers reject it), `propertyNames: {type: string}` (JSON keys are
 * strings), the default `execution.taskSupport: "forbidden"`, an output
 * schema's `additionalProperties: false` (it constrains us, not the caller),
 * and the safe-integer bounds zod adds to every integer.
 */
function compactTool(tool: Record<string, unknown>): Record<string, unknown> {
  const { execution, ...out } = tool as { execution?: { taskSupport?: string } } & Record<string, unknown>;
  if (execution && execution.taskSupport !== "forbidden") out.execution = execution;
  for (const field of ["inputSchema", "outputSchema"]) {
    if (out[field]) out[field] = compactSchema(out[field], field === "outputSchema");
  }
  return out;
}

function compactSchema(node: unknown, output: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => compactSchema(n, output));
  if (typeof node !== "object" || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema") continue;
    if (key === "propertyNames" && JSON.stringify(value) === '{"type":"string"}') continue;
    if (output && key === "additionalProperties" && value === false) continue;
    // zod's bounds for any safe integer: no bound at all, for a reader.
    if ((key === "maximum" && value === Number.MAX_SAFE_INTEGER) || (key === "minimum" && value === Number.MIN_SAFE_INTEGER)) continue;
    out[key] = key === "properties" ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, compactSchema(v, output)])) : compactSchema(value, output);
  }
  return out;
}

export function installSdkHooks(mcp: McpServer): void {
  wrapHandler(mcp, "tools/call", (original) => (request, extra) =>
    original({ ...request, params: request.params && { ...request.params, arguments: withoutNulls(request.params.arguments) } }, extra),
  );
  // 2. A compact tools/list: every tool's schemas without `$schema`.
  wrapHandler(mcp, "tools/list", (original) => async (request, extra) => {
    const result = (await original(request, extra)) as { tools: Record<string, unknown>[] };
    return { ...result, tools: result.tools.map(compactTool) };
  });
}
