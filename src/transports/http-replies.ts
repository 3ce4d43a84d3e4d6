/** The answers the HTTP transport gives itself, before or instead of an MCP server's: JSON, and JSON-RPC errors. */
import type { RpcMessage } from "./http-eras.ts";

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

export const rpcError = (
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: RpcMessage["id"] = null,
) => json(status, { jsonrpc: "2.0", error: { code, message }, id }, headers);
