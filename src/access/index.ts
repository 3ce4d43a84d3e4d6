/**
 * Per-caller access (remote mode with --policy): the policy file, what one
 * caller may do, and each call's view of the stores. The server asks two
 * things: which tools to list (CallerAccess.offers) and, per call, the
 * storages the call may use (callGuard), which enforce every key it touches.
 */
import type { ActionableError } from "../runtime/errors.ts";
import type { Storage } from "../storage/index.ts";
import type { ToolDefinition } from "../tool-kit/types.ts";
import type { CallerAccess } from "./caller-access.ts";
import { guardedStorage } from "./guarded-storage.ts";
import { scopeFor } from "./policy.ts";

export { CallerAccess } from "./caller-access.ts";

/**
 * Why the policy would refuse this call now, or undefined: the tool itself, each key it names at the level the call
 * needs (a copy's source key at read), and the prefix it names (nothing of it visible). A job started under an
 * earlier policy is judged by this when the policy changes, and before its result is handed over.
 */
export function callRefusal(
  access: CallerAccess,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  defaultStore: string,
): ActionableError | undefined {
  const grants = access.forCall(tool, args);
  if (!grants) return access.toolRefusal(tool, args);
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const store = text(args.store) ?? defaultStore;
  const bucket = text(args.bucket_name);
  const level = scopeFor(tool, args);
  if (bucket !== undefined) {
    const keys = [text(args.object_key), ...(Array.isArray(args.keys) ? args.keys.map(text) : [])].filter(
      (k): k is string => k !== undefined,
    );
    for (const key of keys)
      if (!grants.allows(level, store, bucket, key)) return grants.refusal(level, store, bucket, key);
    const prefix = text(args.prefix);
    if (prefix !== undefined) {
      const seen = grants.bucketVisible(store, bucket)
        ? grants.view(store, bucket, prefix)
        : { all: false, prefixes: [] };
      if (!seen.all && seen.prefixes.length === 0) return grants.refusal("read", store, bucket, prefix);
    }
  }
  const sourceBucket = text(args.source_bucket) ?? bucket;
  const sourceKey = text(args.source_key);
  const sourceStore = text(args.source_store) ?? store;
  if (
    sourceBucket !== undefined &&
    sourceKey !== undefined &&
    !grants.allows("read", sourceStore, sourceBucket, sourceKey)
  )
    return grants.refusal("read", sourceStore, sourceBucket, sourceKey);
  return undefined;
}

/** A store's storage as this call may use it; PolicyDenied when no rule grants the call at all. */
export function callGuard(
  access: CallerAccess,
  tool: ToolDefinition,
  args: Record<string, unknown>,
): (storage: Storage, store: string) => Storage {
  const grants = access.forCall(tool, args);
  if (!grants) throw access.toolRefusal(tool, args);
  return (storage, store) => guardedStorage(storage, grants, store);
}
