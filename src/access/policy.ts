/**
 * Which tools exist for a caller, and whether one call may proceed: the one
 * place read-only mode, --allow-delete, the --tools selection, a remote
 * caller's scopes and a remote server's local files are decided (the bucket
 * allowlist and key rules: every bucket and key a call names, found from the
 * tool's schema, by the call wrapper — mcp/stores.ts checkAddresses — and
 * every operation, by the store's storage: allowlisted-storage.ts).
 * Data first: each tool names its group, whether it writes to the store,
 * whether it uses local files, and (for a tool whose effect depends on its
 * arguments) whether this call writes.
 */

import type { Scope } from "../config/oauth-config.ts";
import { ActionableError } from "../runtime/errors.ts";
import type { ToolDefinition, ToolFacts, ToolGroup } from "../tool-kit/types.ts";

export const TOOL_GROUPS: readonly ToolGroup[] = ["read", "write", "delete", "admin"];

export interface PolicyOptions {
  /** Hide every tool that writes to the store; refuse calls that would write. */
  readOnly: boolean;
  /** Register the tools of the "delete" group (deleting objects is opt-in). */
  allowDelete: boolean;
  /** Register the tools that change bucket settings and tags (--allow-admin; opt-in). */
  allowAdmin?: boolean;
  /** Tool names and group names to offer; empty: all. */
  tools: string[];
  /** A remote caller's permissions (its token's scopes); undefined: a local (stdio) server, no scopes. */
  scopes?: ReadonlySet<Scope>;
  /** False on a remote server without --allowed-dir: no tool may touch the server's disk. Default true. */
  localFiles?: boolean;
}

/**
 * With a bucket allowlist in force, a key with a `.` or `..` segment is
 * refused: `a/../../other/k` sent verbatim is `/bucket/a/../../other/k`,
 * which a path-normalising proxy, HTTP client or store turns into another
 * bucket's object. Without an allowlist every bucket is reachable anyway, so
 * such keys (legal in S3) are sent as they are.
 */
export function unsafeKeyRefusal(key: string, bucketAllowlist: boolean): ActionableError | undefined {
  if (!bucketAllowlist || !key.split("/").some((segment) => segment === "." || segment === "..")) return undefined;
  return new ActionableError({
    resource: key,
    code: "UnsafeKey",
    message:
      'This key has a "." or ".." path segment, which a proxy or store on the way may resolve into another bucket; this server is limited to some buckets (--bucket), so it does not send such keys.',
    hint: 'use the key without "." and ".." segments (a key names an object, not a path to resolve).',
  });
}

/**
 * The permission a tool needs: delete for the delete group and delete_bucket,
 * write for whatever changes the store (or, given its arguments, would let
 * someone write, like a PUT link), read for the rest.
 */
export function scopeFor(tool: ToolFacts, args?: Record<string, unknown>): Scope {
  // With arguments (a call), the definition's own functions say; a card (no arguments) is judged by its facts.
  const call = args && "handler" in tool ? { tool, args } : undefined;
  if (tool.group === "delete" || tool.name === "delete_bucket" || call?.tool.deletes?.(call.args as never))
    return "delete";
  if (tool.writesToStore || call?.tool.writes?.(call.args as never)) return "write";
  return "read";
}

/** The permission a call to tool `name` with `args` needs that `scopes` lack; undefined when it has it (or there is no such tool). */
export function missingScope(
  all: readonly ToolDefinition[],
  name: string,
  args: Record<string, unknown>,
  scopes: ReadonlySet<Scope>,
): Scope | undefined {
  const tool = all.find((t) => t.name === name);
  if (!tool) return undefined;
  const needed = scopeFor(tool, args);
  return scopes.has(needed) ? undefined : needed;
}

const usesLocalFiles = (tool: ToolDefinition, args: Record<string, unknown>) =>
  tool.localFiles === "always" || (typeof tool.localFiles === "function" && tool.localFiles(args as never));

/** Problems with a --tools selection: names that are neither a tool nor a group. */
export function selectionProblems(selection: string[], all: readonly Pick<ToolFacts, "name" | "group">[]): string[] {
  const known = new Set<string>([...all.map((t) => t.name), ...TOOL_GROUPS]);
  return selection
    .filter((name) => !known.has(name))
    .map(
      (name) =>
        `tools: "${name}" is neither a tool nor a group; use tool names (${all.map((t) => t.name).join(", ")}) or groups (${TOOL_GROUPS.join(", ")}).`,
    );
}

/** A warning for a selection that asks for delete tools without --allow-delete (they stay off), or undefined. */
export function selectionWarning(
  selection: string[],
  all: readonly Pick<ToolFacts, "name" | "group">[],
  allowDelete: boolean,
): string | undefined {
  if (allowDelete) return undefined;
  const asked = selection.filter(
    (name) => name === "delete" || all.some((t) => t.name === name && t.group === "delete"),
  );
  if (asked.length === 0) return undefined;
  return `--tools names ${asked.join(", ")}, but deleting objects is off without --allow-delete (STORE_ALLOW_DELETE=true): those tools are not offered.`;
}

/** The tools this configuration offers this caller, in the list's order (remote notes added to descriptions where local files are off). */
export function toolsFor<T extends ToolFacts>(all: readonly T[], options: PolicyOptions): T[] {
  const chosen = new Set(options.tools);
  const localFiles = options.localFiles ?? true;
  return all
    .filter((tool) => {
      if (options.readOnly && tool.writesToStore) return false;
      if (tool.group === "delete" && !options.allowDelete) return false;
      if (tool.needsAllowAdmin && !options.allowAdmin) return false;
      if (options.scopes && !options.scopes.has(scopeFor(tool))) return false;
      if (!localFiles && tool.localFiles === "always") return false;
      return chosen.size === 0 || chosen.has(tool.name) || chosen.has(tool.group);
    })
    .map((tool) =>
      !localFiles && tool.remoteNote ? { ...tool, description: `${tool.description} ${tool.remoteNote}` } : tool,
    );
}

/** Why this call may not proceed, or undefined: a write in read-only mode, a permission the caller lacks, local files on a remote server. */
export function callRefusal(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  options: PolicyOptions,
): ActionableError | undefined {
  // The delete tools are hidden then; with several stores they may be offered for another store.
  if (!options.allowDelete && (tool.group === "delete" || tool.deletes?.(args as never))) {
    return new ActionableError({
      resource: tool.name,
      code: "DeleteNotAllowed",
      message:
        tool.group === "delete"
          ? "Deleting objects is off for this store."
          : `This call would delete (${tool.deletesBy ?? "delete_extraneous or move"}), and deleting is off for this store.`,
      hint:
        tool.group === "delete"
          ? "the user must allow deletes (--allow-delete, or STORE_<NAME>_ALLOW_DELETE=true for one store)."
          : `call again without ${tool.deletesBy ?? "delete_extraneous/move"}; the user must allow deletes (--allow-delete / STORE_ALLOW_DELETE=true, or STORE_<NAME>_ALLOW_DELETE=true for one store).`,
    });
  }
  if (tool.needsAllowAdmin && !options.allowAdmin) {
    return new ActionableError({
      resource: tool.name,
      code: "AdminNotAllowed",
      message: "Changing bucket settings and tags is off on this server.",
      hint: "the user must start the server with --allow-admin (STORE_ALLOW_ADMIN=true) to allow it.",
    });
  }
  const needed = scopeFor(tool, args);
  if (options.scopes && !options.scopes.has(needed)) {
    return new ActionableError({
      resource: tool.name,
      code: "InsufficientScope",
      message: `This call needs the ${needed} permission, which the caller's access token does not grant.`,
      hint: `ask for a token with the ${needed} scope, or use a call that only reads.`,
    });
  }
  if ((options.localFiles ?? true) === false && usesLocalFiles(tool, args)) {
    return new ActionableError({
      resource: tool.name,
      code: "LocalFilesDisabled",
      message:
        "This is a remote server: a local path would name the server's disk, so local files are off (no --allowed-dir was configured).",
      hint: "use presign_url for a link the user can download from or upload to.",
    });
  }
  // Tools that write are hidden in read-only mode; with several stores they may be offered for another store.
  if (!options.readOnly || !(tool.writesToStore || tool.writes?.(args as never))) return undefined;
  return new ActionableError({
    resource: tool.name,
    code: "ReadOnlyMode",
    message:
      "This server runs in read-only mode (--read-only), so nothing that lets anyone write to the store is allowed.",
    hint: "use a read operation instead (e.g. a GET presigned URL); the user must restart the server without --read-only to write.",
  });
}
