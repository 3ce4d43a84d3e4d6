/**
 * Every MCP request but a tool call, for the operator's metrics and traces
 * (runtime/telemetry.ts): its duration by method, with the JSON-RPC error's
 * code as error.type when it fails, and a span named `{method}` (prompts/get
 * with the prompt's name; never a resource's URI, which names keys), its
 * parent the caller's trace context. A tool call is measured by its own steps
 * (call/call-state.ts), so that a call handed back as a job is measured to its
 * end. Installed only when telemetry is on: off, the handlers stay the SDK's.
 */
import type { McpServer, ServerContext } from "@modelcontextprotocol/server";
import { telemetry } from "../runtime/telemetry.ts";
import { traceParentOf } from "./call/call-state.ts";
import { requestMethods, wrapRequestHandler } from "./sdk-internals.ts";

export function measureRequests(mcp: McpServer): void {
  const recorder = telemetry();
  if (!recorder.enabled) return;
  for (const method of requestMethods(mcp)) {
    if (method === "tools/call") continue;
    wrapRequestHandler(mcp, method, (original) => async (request, extra) => {
      const ctx = extra as ServerContext;
      const name = request.params?.name;
      const target = method === "prompts/get" && typeof name === "string" ? name : undefined;
      const span = recorder.span(method, target, ctx.mcpReq?.id, traceParentOf(ctx));
      const started = performance.now();
      let errorType: string | undefined;
      try {
        return await span.run(async () => original(request, extra));
      } catch (err) {
        errorType = String((err as { code?: unknown }).code ?? "_OTHER");
        throw err;
      } finally {
        span.end(errorType);
        recorder.operation(method, undefined, (performance.now() - started) / 1000, errorType);
      }
    });
  }
}
