/**
 * A store as the operator's bucket allowlist (--bucket, STORE_<NAME>_BUCKETS)
 * lets any call use it: every operation's buckets and keys (storage-touches.ts)
 * are checked before anything is sent — a bucket outside the list is
 * BucketNotAllowed, an object key with "." or ".." segments UnsafeKey — and
 * a listing of buckets shows only the allowed ones. The call wrapper checks
 * the buckets and keys a call names before it runs (mcp/stores.ts); this
 * catches those a tool derives (a bulk job's keys, a copy's source), so no
 * path goes around the list.
 */
import type { Storage } from "../storage/index.ts";
import { STORAGE_TOUCHES, SYNC_METHODS } from "./storage-touches.ts";

export interface Allowlist {
  bucketAllowed(bucket: string): boolean;
  /** Throws BucketNotAllowed. */
  checkBucket(bucket: string): void;
  /** Throws UnsafeKey. */
  checkKey(key: string): void;
}

export function allowlistedStorage(storage: Storage, list: Allowlist): Storage {
  const out: Record<string, unknown> = {};
  for (const [name, touches] of Object.entries(STORAGE_TOUCHES) as [
    keyof Storage,
    (...args: unknown[]) => { bucket: string; key?: string }[],
  ][]) {
    const method = (storage[name] as (...args: unknown[]) => unknown).bind(storage);
    out[name] = (...args: unknown[]) => {
      try {
        for (const touch of touches(...args)) {
          list.checkBucket(touch.bucket);
          if (touch.key) list.checkKey(touch.key);
        }
      } catch (err) {
        if (SYNC_METHODS.has(name)) throw err;
        return Promise.reject(err);
      }
      return method(...args);
    };
  }
  out.listBuckets = async (...args: Parameters<Storage["listBuckets"]>) => {
    const page = await storage.listBuckets(...args);
    return { ...page, buckets: page.buckets.filter((b) => list.bucketAllowed(b.name)) };
  };
  return out as unknown as Storage;
}
