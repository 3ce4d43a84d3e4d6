/**
 * ListBuckets, a page at a time. AWS accounts may hold up to a million
 * buckets and ListBuckets pages (MaxBuckets, ContinuationToken, Prefix);
 * stores that predate that (Ceph RGW 16 among them) ignore the parameters
 * and send every bucket, so the page is cut here too, and continued with a
 * token of ours ("lb1." and the last name shown) that is never sent to the
 * store. A store that says more follows without a token, or gives back the
 * token it was sent, ends the listing with ListingNotAdvancing.
 */

import { stalledListing } from "./errors.ts";
import { iso } from "./iso-date.ts";
import type { Operation } from "./requests/operation.ts";
import type { BucketPage, BucketsRequest } from "./types.ts";

const OUR_TOKEN = "lb1.";

export function listBucketPage(operation: Operation, req: BucketsRequest, signal?: AbortSignal): Promise<BucketPage> {
  return operation({}, signal, async ({ client, sdk }, send) => {
    const after = req.continuationToken?.startsWith(OUR_TOKEN)
      ? req.continuationToken.slice(OUR_TOKEN.length)
      : undefined;
    const storeToken = after === undefined ? req.continuationToken : undefined;
    const out = await client.send(
      new sdk.ListBucketsCommand({
        ...(req.prefix ? { Prefix: req.prefix } : {}),
        ...(req.maxBuckets ? { MaxBuckets: req.maxBuckets } : {}),
        ...(storeToken ? { ContinuationToken: storeToken } : {}),
      }),
      send,
    );
    const names = (out.Buckets ?? [])
      .map((b) => ({ name: b.Name ?? "", creation_date: iso(b.CreationDate) }))
      .filter((b) => (!req.prefix || b.name.startsWith(req.prefix)) && (after === undefined || b.name > after))
      // Our token goes on after the last name shown: the page must be in name order (S3's is; a store's may not be).
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const max = req.maxBuckets ?? Number.POSITIVE_INFINITY;
    if (names.length > max) {
      const buckets = names.slice(0, max);
      return { buckets, next_continuation_token: `${OUR_TOKEN}${buckets.at(-1)!.name}` };
    }
    const next = out.ContinuationToken || null;
    if (next !== null && next === storeToken) throw stalledListing("s3 (ListBuckets)");
    return { buckets: names, next_continuation_token: next };
  });
}
