/**
 * completion/complete for bucket names and keys (the s3:// template's and
 * the prompts' arguments), listed as the caller's list_buckets and
 * list_objects may list them, and the audit line every listing writes
 * (resources/list's too).
 */
import type { AuditEntry } from "../runtime/audit.ts";
import { ActionableError } from "../runtime/errors.ts";
import { type Storage, visibleBuckets } from "../storage/index.ts";
import { MAX_BUCKETS } from "../tool-kit/limits.ts";
import type { ToolContext } from "../tool-kit/types.ts";

/** completion/complete: at most this many values (the MCP limit). */
const COMPLETIONS = 100;

/** What completing bucket names and keys needs (the resource template's and the prompts' arguments). */
export interface CompletionDeps extends Pick<ToolContext, "configuredBuckets" | "bucketAllowed"> {
  /** The listings the caller's tools offer, each as those tools may list (under a policy, their rules): list_buckets, list_objects. */
  lists: { buckets?: Storage; keys?: Storage };
  /** --audit-log: a line per listing (resources/list, completions): what was listed and how many names it returned. */
  auditList?: (entry: Omit<AuditEntry, "caller">) => void;
}

/** Runs a listing with its audit line: the action, where, and how many names it returned (or the error's code). */
export async function listed<T extends { length: number }>(
  deps: Pick<CompletionDeps, "auditList">,
  action: string,
  where: { store?: string; bucket?: string; prefix?: string },
  list: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const line = (outcome: string, returned?: number) =>
    deps.auditList?.({
      action,
      ...where,
      outcome,
      ...(returned === undefined ? {} : { returned }),
      duration_ms: Math.round(performance.now() - started),
      request_id: "",
    });
  try {
    const out = await list();
    line("ok", out.length);
    return out;
  } catch (err) {
    line(err instanceof ActionableError ? err.code : "InternalError");
    throw err;
  }
}

/** A key that may not list buckets, with none configured, has no names to offer: an empty completion, not an error (its audit line says AccessDenied). */
function nothingToOffer(err: unknown): string[] {
  if (err instanceof ActionableError && err.code === "AccessDenied") return [];
  throw err;
}
/**
 * Completions of a bucket name and of a key in the `bucket` argument's bucket (one level at a time), as the caller's
 * list_buckets and list_objects may list them; each listing audited. For the s3:// template and the prompts' arguments.
 */
export function objectCompleters(deps: CompletionDeps) {
  return {
    bucket: async (value: string) => {
      const lister = deps.lists.buckets;
      return lister ? completeBuckets(deps, lister, deps, value) : [];
    },
    // Keys and "folders" under what was typed so far, one level at a time.
    key: async (value: string, context?: { arguments?: Record<string, string> }) => {
      const bucket = context?.arguments?.bucket;
      const lister = deps.lists.keys;
      if (!lister || !bucket || !deps.bucketAllowed(bucket)) return [];
      return listed(deps, "completion/complete", { bucket, prefix: value }, async () => {
        const page = await lister.listObjects({
          bucket,
          prefix: value || undefined,
          delimiter: "/",
          maxKeys: COMPLETIONS,
        });
        return [...page.common_prefixes, ...page.objects.map((o) => o.key)].slice(0, COMPLETIONS);
      });
    },
  };
}

/**
 * The bucket names starting with `value` that `lister` lists and `scope` allows (its configured buckets when it may
 * not list), audited; none when the key may not list buckets. `store` names another store in the audit line.
 */
export function completeBuckets(
  deps: Pick<CompletionDeps, "auditList">,
  lister: Storage,
  scope: Pick<CompletionDeps, "configuredBuckets" | "bucketAllowed">,
  value: string,
  store?: string,
): Promise<string[]> {
  return listed(deps, "completion/complete", { ...(store !== undefined ? { store } : {}), prefix: value }, async () =>
    (
      await visibleBuckets(lister, scope.configuredBuckets, {
        maxBuckets: MAX_BUCKETS,
        ...(value ? { prefix: value } : {}),
      })
    ).buckets
      .map((b) => b.name)
      .filter((name) => scope.bucketAllowed(name) && name.startsWith(value))
      .slice(0, COMPLETIONS),
  ).catch(nothingToOffer);
}
