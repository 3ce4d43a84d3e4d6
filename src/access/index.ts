/**
 * Per-caller access (remote mode with --policy): the policy file, what one
 * caller may do, and each call's view of the stores. The server asks two
 * things: which tools to list (CallerAccess.offers) and, per call, the
 * storages the call may use (callGuard), which enforce every key it touches.
 */
import type { Storage } from "../storage/index.ts";
import type { ToolDefinition } from "../tools/types.ts";
import type { CallerAccess } from "./caller-access.ts";
import { guardedStorage } from "./guarded-storage.ts";

export { CallerAccess } from "./caller-access.ts";

/** A store's storage as this call may use it; PolicyDenied when no rule grants the call at all. */
export function callGuard(access: CallerAccess, tool: ToolDefinition, args: Record<string, unknown>): (storage: Storage, store: string) => Storage {
  const grants = access.forCall(tool, args);
  if (!grants) throw access.toolRefusal(tool, args);
  return (storage, store) => guardedStorage(storage, grants, store);
}
