/**
 * Which tools exist for this server, and whether one call may proceed: the
 * one place read-only mode, --allow-delete and the --tools selection are
 * decided (the bucket allowlist is checked per call by the tools through
 * ToolContext.checkBucket). Data first: each tool names its group, whether
 * it writes to the store, and (for a tool whose effect depends on its
 * arguments) whether this call writes.
 */
import { ActionableError } from "./errors.ts";
import type { ToolDefinition, ToolGroup } from "./tools/types.ts";

export const TOOL_GROUPS: readonly ToolGroup[] = ["read", "write", "delete", "admin"];

export interface PolicyOptions {
  /** Hide every tool that writes to the store; refuse calls that would write. */
  readOnly: boolean;
  /** Register the tools of the "delete" group (deleting objects is opt-in). */
  allowDelete: boolean;
  /** Tool names and group names to offer; empty: all. */
  tools: string[];
}

/** Problems with a --tools selection: names that are neither a tool nor a group. */
export function selectionProblems(selection: string[], all: readonly ToolDefinition[]): string[] {
  const known = new Set<string>([...all.map((t) => t.name), ...TOOL_GROUPS]);
  return selection
    .filter((name) => !known.has(name))
    .map((name) => `tools: "${name}" is neither a tool nor a group; use tool names (${all.map((t) => t.name).join(", ")}) or groups (${TOOL_GROUPS.join(", ")}).`);
}

/** The tools this configuration offers, in the list's order. */
export function toolsFor(all: readonly ToolDefinition[], options: PolicyOptions): ToolDefinition[] {
  const chosen = new Set(options.tools);
  return all.filter((tool) => {
    if (options.readOnly && tool.writesToStore) return false;
    if (tool.group === "delete" && !options.allowDelete) return false;
    return chosen.size === 0 || chosen.has(tool.name) || chosen.has(tool.group);
  });
}

/** Why this call may not proceed (a registered tool whose arguments would write in read-only mode), or undefined. */
export function callRefusal(tool: ToolDefinition, args: Record<string, unknown>, options: PolicyOptions): ActionableError | undefined {
  if (!options.readOnly || !tool.writes?.(args as never)) return undefined;
  return new ActionableError({
    resource: tool.name,
    code: "ReadOnlyMode",
    message: "This server runs in read-only mode (--read-only), so nothing that lets anyone write to the store is allowed.",
    hint: "use a read operation instead (e.g. a GET presigned URL); the user must restart the server without --read-only to write.",
  });
}
