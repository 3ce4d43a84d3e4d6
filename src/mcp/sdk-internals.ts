/**
 * Every place this server reaches past the public API of the MCP SDK
 * (`@modelcontextprotocol/server`, written for 2.4.0; the version is pinned in
 * bun.lock). The v2 SDK has no tool middleware and no way to install its
 * handlers before the first registration, and this server registers its tools
 * and prompts lazily (on the first call that needs them) while answering
 * tools/list and prompts/list from its own cards. Each touchpoint has a unit
 * test (test/unit/mcp/sdk-internals.test.ts) that names this SDK version and
 * fails when an upgrade moves it; nothing else in src/ touches SDK internals.
 */
import type { McpServer } from "@modelcontextprotocol/server";

export type RequestHandler = (request: { params?: Record<string, unknown> }, extra: unknown) => unknown;

type WithHandlers = { _requestHandlers?: Map<string, RequestHandler> };
type WithToolHandlers = { setToolRequestHandlers(): void };
type WithPromptHandlers = { setPromptRequestHandlers(): void; setCompletionRequestHandler(): void };

/** The SDK version these touchpoints were written and tested for. */
export const SDK_WRITTEN_FOR = "2.4.0";

/** The methods the SDK has a request handler for, now. */
export function requestMethods(mcp: McpServer): string[] {
  return [...((mcp.server as unknown as WithHandlers)._requestHandlers?.keys() ?? [])];
}

/** Replaces the handler the SDK installed for `method` with `wrap(original)`; throws if the SDK has none. */
export function wrapRequestHandler(
  mcp: McpServer,
  method: string,
  wrap: (original: RequestHandler) => RequestHandler,
): void {
  const handlers = (mcp.server as unknown as WithHandlers)._requestHandlers;
  const original = handlers?.get(method);
  if (!handlers || !original) throw new Error(`the MCP SDK's ${method} handler was not found`);
  handlers.set(method, wrap(original));
}

/**
 * Installs the SDK's tools/list and tools/call handlers (and declares the
 * tools capability) now, as it does on the first registered tool, and keeps
 * later registrations from telling the client the list changed: tools/list
 * already shows every tool registered later.
 */
export function installToolHandlers(mcp: McpServer): void {
  (mcp as unknown as WithToolHandlers).setToolRequestHandlers();
  mcp.sendToolListChanged = () => {};
}

/** The same for prompts/list, prompts/get and completion/complete. */
export function installPromptHandlers(mcp: McpServer): void {
  const sdk = mcp as unknown as WithPromptHandlers;
  sdk.setPromptRequestHandlers();
  sdk.setCompletionRequestHandler();
  mcp.sendPromptListChanged = () => {};
}
