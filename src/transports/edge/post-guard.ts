/** Stateless: no standalone SSE stream to resume, no session to delete; only POST carries MCP. */
import { rpcError } from "../http-replies.ts";
import type { Guard } from "./guard.ts";

export const postGuard: Guard = (edge) =>
  edge.req.method === "POST"
    ? undefined
    : rpcError(405, -32000, "Method not allowed: this server is stateless; send JSON-RPC with POST.", {
        ...edge.cors,
        allow: "POST",
      });
