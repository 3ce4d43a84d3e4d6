/**
 * A request every guard let through, served by the MCP server of its era
 * (http-eras.ts). The calls that came in one loop turn start together
 * (runtime/turn.ts); a call still running when the shutdown grace is over is
 * answered "shutting down" (its server then cancels it). A JSON answer frees
 * its server at once, an SSE one when the stream has carried it; a small
 * JSON answer goes out as bytes (no stream to pull slice by slice).
 */
import { SendLeases } from "../../runtime/memory.ts";
import { nextTurn } from "../../runtime/turn.ts";
import type { GraceWaiters } from "../http-answer.ts";
import type { eraServing, RpcMessage } from "../http-eras.ts";
import { rpcError } from "../http-replies.ts";
import type { EdgeRequest } from "./guard.ts";

/** A finished answer sits in memory until written: a reservation is held at most this long, whatever happens. */
const MAX_LEASE_MS = 10 * 60_000;

/** Told what outlives the dispatch: the call's reservations, the server to close after a stream (SSE), the request id. */
export type Answered = (leases: SendLeases, close: (() => void) | undefined, id: RpcMessage["id"] | undefined) => void;

export interface DispatchDeps {
  serveByEra: ReturnType<typeof eraServing>;
  grace: GraceWaiters;
  shuttingDown: string;
  /** JSON answers up to this size are sent as bytes at once, and marked written (`fixed`). */
  smallAnswerBytes: number;
  fixed: WeakSet<Response>;
}

export function dispatcher(deps: DispatchDeps) {
  return async (edge: EdgeRequest, server: Bun.Server<undefined>, answered: Answered): Promise<Response> => {
    const { req, cors, message } = edge;
    // A long tool call sends nothing until it is done: no idle cut for an authenticated call.
    server.timeout(req, 0);
    await nextTurn();
    const leases = new SendLeases(MAX_LEASE_MS);
    const { served, close, sessionId } = await deps.serveByEra(req, edge.body, message, edge.caller!, leases);
    const waiting = deps.grace.wait();
    const res = await Promise.race([served, waiting.ended.then(() => undefined)]).finally(waiting.forget);
    if (!res) {
      close();
      return rpcError(503, -32000, deps.shuttingDown, cors, message?.id ?? null);
    }
    const headers = new Headers(res.headers);
    for (const [k, v] of Object.entries(cors)) headers.set(k, v);
    if (sessionId && res.ok) headers.set("mcp-session-id", sessionId);
    const sse = !!res.body && !!res.headers.get("content-type")?.includes("text/event-stream");
    if (!sse) close();
    answered(leases, sse ? close : undefined, message?.id);
    if (sse) return new Response(res.body, { status: res.status, headers });
    // Large JSON answers still stream, so their memory is held until the client has taken them.
    const bytes = new Uint8Array(await res.arrayBuffer());
    const out = new Response(bytes, { status: res.status, headers });
    if (bytes.length <= deps.smallAnswerBytes) deps.fixed.add(out);
    return out;
  };
}
