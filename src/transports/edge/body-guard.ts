/**
 * The body: bounded, JSON, and one JSON-RPC message (protocol 2025-06-18
 * dropped batching, and a batch's answers are held until the last is done,
 * past every per-call memory bound). What it is goes to the access log.
 */

import type { RpcMessage } from "../http-eras.ts";
import { rpcError } from "../http-replies.ts";
import type { Guard } from "./guard.ts";

export function bodyGuard(maxBytes: number): Guard {
  return async (edge) => {
    const { req, cors } = edge;
    if (Number(req.headers.get("content-length") ?? 0) > maxBytes)
      return rpcError(413, -32600, `Request body larger than ${maxBytes} bytes.`, cors);
    let body: unknown;
    try {
      body = JSON.parse(await req.text());
    } catch {
      return rpcError(400, -32700, "Parse error: the body is not JSON.", cors);
    }
    const caller = edge.caller?.id;
    if (Array.isArray(body) && body.length !== 1) {
      edge.note(`batch of ${body.length} refused`, caller);
      return rpcError(
        400,
        -32600,
        "Invalid request: JSON-RPC batches are not accepted (MCP 2025-06-18 removed them); send one message per POST.",
        cors,
      );
    }
    const message = (Array.isArray(body) ? body[0] : body) as RpcMessage | undefined;
    edge.body = body;
    edge.message = message;
    edge.note(
      message?.method === "tools/call" ? `tools/call ${message.params?.name ?? "?"}` : (message?.method ?? "response"),
      caller,
    );
    return undefined;
  };
}
