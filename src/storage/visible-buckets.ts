/**
 * The buckets a caller can be shown, for keys that may not list buckets.
 * Least-privilege keys (an IAM user without s3:ListAllMyBuckets, an R2 or
 * B2 token scoped to one bucket) get AccessDenied on ListBuckets yet work
 * with everything inside their buckets; then the configured buckets (the
 * --bucket allowlist, a store's own) that a HeadBucket confirms stand in for
 * the listing, and without any the refusal says what to configure.
 */
import { ActionableError } from "../runtime/errors.ts";
import type { BucketInfo, BucketPage, BucketsRequest, Storage } from "./types.ts";

export interface VisibleBuckets extends BucketPage {
  /** "store": ListBuckets answered; "configured": the key may not list buckets, these are the configured ones a HEAD confirmed. */
  from: "store" | "configured";
}

const OURS = "cb1.";
const DATES_PAGE = 1000;

function cannotListBuckets(): ActionableError {
  return new ActionableError({
    resource: "s3",
    code: "AccessDenied",
    message:
      "These credentials may not list buckets (ListBuckets: AccessDenied) — as keys scoped to some buckets cannot (an IAM user without s3:ListAllMyBuckets, an R2 or B2 bucket token). Everything else works on a bucket named directly.",
    hint: "call the other tools with the bucket name you know (ask the user for it); the user can name the buckets with --bucket NAME / STORE_BUCKETS (STORE_<NAME>_BUCKETS for one store) so list_buckets shows them.",
  });
}

/**
 * A page of buckets. Without an allowlist: the store's listing, or (when the key may not list) a refusal that says
 * what to configure. With one (--bucket), the allowlist is the listing — a store's page of a large account would be
 * cut before it is filtered — with the dates ListBuckets gives when it answers whole, else each confirmed by a HEAD.
 */
export async function visibleBuckets(
  storage: Storage,
  configured: readonly string[],
  req: BucketsRequest,
  signal?: AbortSignal,
): Promise<VisibleBuckets> {
  if (configured.length === 0) {
    try {
      return { ...(await storage.listBuckets(req, signal)), from: "store" };
    } catch (err) {
      if (err instanceof ActionableError && err.code === "AccessDenied") throw cannotListBuckets();
      throw err;
    }
  }
  const after = req.continuationToken?.startsWith(OURS) ? req.continuationToken.slice(OURS.length) : undefined;
  const names = [...new Set(configured)]
    .sort()
    .filter((n) => (!req.prefix || n.startsWith(req.prefix)) && (after === undefined || n > after));
  const max = req.maxBuckets ?? names.length;
  const page = names.slice(0, max);
  const next = names.length > page.length ? `${OURS}${page.at(-1)}` : null;
  // One page of the store's listing, for the dates: an account with more than a page of buckets gets its allowlist confirmed by HEADs.
  const listed = await storage
    .listBuckets({ maxBuckets: DATES_PAGE, ...(req.prefix ? { prefix: req.prefix } : {}) }, signal)
    .catch((err: unknown) => {
      if (err instanceof ActionableError && err.code === "AccessDenied") return undefined;
      throw err;
    });
  if (listed && listed.next_continuation_token === null) {
    const byName = new Map(listed.buckets.map((b) => [b.name, b]));
    return { buckets: page.flatMap((n) => byName.get(n) ?? []), next_continuation_token: next, from: "store" };
  }
  const confirmed = await Promise.all(
    page.map(async (name): Promise<BucketInfo | undefined> => {
      try {
        await storage.headBucket(name, signal);
        return { name, creation_date: null };
      } catch (err) {
        // One that does not exist or is not this key's is left out; anything else (the store down) is the call's error.
        if (
          err instanceof ActionableError &&
          ["NoSuchBucket", "NotFound", "AccessDenied", "PolicyDenied", "BucketNotAllowed"].includes(err.code)
        )
          return undefined;
        throw err;
      }
    }),
  );
  return {
    buckets: confirmed.filter((b): b is BucketInfo => b !== undefined),
    next_continuation_token: next,
    from: listed ? "store" : "configured",
  };
}
