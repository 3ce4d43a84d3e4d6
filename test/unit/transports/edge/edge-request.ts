/** A request to /mcp as the guards see it, for the guards' tests. */
import type { EdgeRequest } from "../../../../src/transports/edge/guard.ts";

export function edgeOf(
  init: RequestInit & { url?: string } = {},
  over: Partial<EdgeRequest> = {},
): EdgeRequest & { notes: string[]; held: (() => void)[] } {
  const notes: string[] = [];
  const held: (() => void)[] = [];
  return {
    req: new Request(init.url ?? "http://localhost:8787/mcp", { method: "POST", ...init }),
    cors: {},
    note: (what) => void notes.push(what),
    hold: (release) => void held.push(release),
    notes,
    held,
    ...over,
  };
}

export const caller = { id: "label:ci", scopes: new Set(["read", "write", "delete"] as const) };
