import type { ToolAnnotations } from "./types.ts";

/**
 * A tool's annotations as advertised: only the hints that differ from the MCP
 * spec's defaults (readOnlyHint false, destructiveHint true, idempotentHint
 * false, openWorldHint true), but destructiveHint always on a tool that
 * changes something, so a client that badges only an explicit `true` still
 * warns. For a read-only tool the spec gives destructive and idempotent no
 * meaning. ~1.3 KB of tools/list by default (the house issue's budget).
 */
export function advertisedAnnotations(a: ToolAnnotations): Partial<ToolAnnotations> {
  const out: Partial<ToolAnnotations> = a.readOnlyHint
    ? { readOnlyHint: true }
    : { destructiveHint: a.destructiveHint, ...(a.idempotentHint ? { idempotentHint: true } : {}) };
  return a.openWorldHint ? out : { ...out, openWorldHint: false };
}
