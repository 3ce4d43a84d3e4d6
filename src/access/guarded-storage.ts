/**
 * A store as one call of one caller may use it under the policy: every
 * storage operation checks the bucket and key it touches at the level it
 * needs (read, write, delete) before anything is sent, and listings return
 * only what the caller may see (a prefix outside their grants lists
 * nothing). Tools, bulk jobs, resources and completions all reach the store
 * through this, so no path around it exists: a bulk job checks each object,
 * a copy needs read on its source and write on its destination. A listing
 * above the caller's grants asks the store only for the granted prefixes
 * and pages with markers the server makes (narrowed-listing.ts).
 */

import type { ObjectAddress, Storage } from "../storage/index.ts";
import type { Grants, PrefixView } from "./caller-access.ts";
import { narrowedObjects, narrowedVersions, unitsUnder } from "./narrowed-listing.ts";
import { unsafeKeyRefusal } from "./policy.ts";
import type { Level } from "./policy-file.ts";

export function guardedStorage(storage: Storage, grants: Grants, store: string): Storage {
  const need = (level: Level, bucket: string, key: string) => {
    // A "." or ".." segment could be resolved by a proxy on the way into a key outside the granted prefix.
    const unsafe = unsafeKeyRefusal(key, true);
    if (unsafe) throw unsafe;
    if (!grants.allows(level, store, bucket, key)) throw grants.refusal(level, store, bucket, key);
  };
  const view = (bucket: string, prefix: string): PrefixView => {
    if (!grants.bucketVisible(store, bucket)) throw grants.refusal("read", store, bucket, prefix);
    return grants.view(store, bucket, prefix);
  };
  const g: Guard = { storage, grants, store, need, view, read: (addr) => need("read", addr.bucket, addr.key) };
  return { ...guardedListings(g), ...guardedObjects(g), ...guardedSettings(g) };
}

/** One decorated store's checks, shared by its three groups of methods. */
interface Guard {
  storage: Storage;
  grants: Grants;
  store: string;
  /** Throws unless the caller may act at `level` on the key (UnsafeKey for a dot segment). */
  need(level: Level, bucket: string, key: string): void;
  /** What of the prefix the caller sees (all, or their granted prefixes under it); throws for a bucket they cannot see. */
  view(bucket: string, prefix: string): PrefixView;
  read(addr: ObjectAddress): void;
}

/** Up to `limit` of what `list` finds in each granted prefix under `prefix`, in key order. */
async function eachGranted<T>(
  prefixes: string[],
  prefix: string,
  limit: number,
  list: (p: string, left: number) => Promise<{ items: T[]; more: boolean }>,
): Promise<{ items: T[]; more: boolean }> {
  const items: T[] = [];
  for (const unit of unitsUnder(prefix, undefined, prefixes)) {
    if (!("prefix" in unit)) continue;
    if (items.length >= limit) return { items, more: true };
    const found = await list(unit.prefix, limit - items.length);
    items.push(...found.items);
    if (found.more) return { items, more: true };
  }
  return { items, more: false };
}

/** Listings show only what the caller may see: a prefix above their grants is asked for the granted prefixes alone. */
function guardedListings(
  g: Guard,
): Pick<
  Storage,
  "listBuckets" | "headBucket" | "listObjects" | "listIncompleteUploads" | "listKeys" | "listObjectVersions"
> {
  const { storage, grants, store, view } = g;
  return {
    // A page of the store's buckets with the ones no rule covers left out (a page may come back short).
    listBuckets: async (req, signal) => {
      const page = await storage.listBuckets(req, signal);
      return { ...page, buckets: page.buckets.filter((b) => grants.bucketVisible(store, b.name)) };
    },
    headBucket: async (bucket, signal) => {
      if (!grants.bucketVisible(store, bucket)) throw grants.refusal("read", store, bucket, "");
      return storage.headBucket(bucket, signal);
    },
    listObjects: async (req, signal) => {
      const seen = view(req.bucket, req.prefix ?? "");
      if (seen.all) return storage.listObjects(req, signal);
      return narrowedObjects(storage, req, unitsUnder(req.prefix ?? "", req.delimiter, seen.prefixes), signal);
    },
    listIncompleteUploads: async (bucket, prefix, limit, sizeLimit, signal) => {
      const seen = view(bucket, prefix);
      if (seen.all) return storage.listIncompleteUploads(bucket, prefix, limit, sizeLimit, signal);
      let sized = sizeLimit;
      const { items, more } = await eachGranted(seen.prefixes, prefix, limit, async (p, left) => {
        const found = await storage.listIncompleteUploads(bucket, p, left, Math.max(0, sized), signal);
        sized -= found.uploads.length;
        return { items: found.uploads, more: found.more };
      });
      return { uploads: items, more };
    },
    listKeys: async (bucket, prefix, limit, signal) => {
      const seen = view(bucket, prefix);
      if (seen.all) return storage.listKeys(bucket, prefix, limit, signal);
      const { items, more } = await eachGranted(seen.prefixes, prefix, limit, async (p, left) => {
        const found = await storage.listKeys(bucket, p, left, signal);
        return { items: found.keys, more: found.more };
      });
      return { keys: items, more };
    },
    listObjectVersions: async (req, signal) => {
      const seen = view(req.bucket, req.prefix ?? "");
      if (seen.all) return storage.listObjectVersions(req, signal);
      return narrowedVersions(storage, req, unitsUnder(req.prefix ?? "", undefined, seen.prefixes), signal);
    },
  };
}

/** An object's bytes and life: read, write or delete on its key (a copy: read on its source, write on its destination). */
function guardedObjects(
  g: Guard,
): Pick<
  Storage,
  | "readObjectHead"
  | "openObjectDownload"
  | "uploadObject"
  | "streamingFor"
  | "hasKeptUpload"
  | "copyFrom"
  | "headObject"
  | "putObject"
  | "copyObject"
  | "deleteObject"
  | "deleteObjects"
  | "presign"
  | "restoreObject"
> {
  const { storage, grants, store, need, read } = g;
  return {
    readObjectHead: async (addr, maxBytes, signal, offset, etag) => {
      read(addr);
      return storage.readObjectHead(addr, maxBytes, signal, offset, etag);
    },
    openObjectDownload: async (addr, signal, options) => {
      read(addr);
      return storage.openObjectDownload(addr, signal, options);
    },
    uploadObject: async (req, signal) => {
      need("write", req.bucket, req.key);
      return storage.uploadObject(
        {
          ...req,
          mayAbort: (bucket, key) =>
            grants.allows("write", store, bucket, key) && (req.mayAbort?.(bucket, key) ?? true),
        },
        signal,
      );
    },
    streamingFor: async (req, wholeMd5, signal) => {
      need("write", req.bucket, req.key);
      return storage.streamingFor(req, wholeMd5, signal);
    },
    // Only this server's own record of a cut upload: nothing of the store is read.
    hasKeptUpload: (req) => storage.hasKeptUpload(req),
    // The source is another store's guarded storage: its own reads are checked there.
    copyFrom: async (source, req, signal, nameSource) => {
      need("write", req.bucket, req.key);
      return storage.copyFrom(source, req, signal, nameSource);
    },
    headObject: async (addr, signal) => {
      read(addr);
      return storage.headObject(addr, signal);
    },
    putObject: async (req, signal) => {
      need("write", req.bucket, req.key);
      return storage.putObject(req, signal);
    },
    copyObject: async (req, signal) => {
      read(req.source);
      need("write", req.bucket, req.key);
      return storage.copyObject(req, signal);
    },
    deleteObject: async (addr, signal) => {
      need("delete", addr.bucket, addr.key);
      return storage.deleteObject(addr, signal);
    },
    deleteObjects: async (bucket, keys, signal) => {
      for (const key of keys) need("delete", bucket, key);
      return storage.deleteObjects(bucket, keys, signal);
    },
    presign: async (req) => {
      need(req.method === "PUT" ? "write" : "read", req.bucket, req.key);
      return storage.presign(req);
    },

    restoreObject: async (addr, request, signal) => {
      need("write", addr.bucket, addr.key);
      return storage.restoreObject(addr, request, signal);
    },
  };
}

/** A bucket's settings are about all of it (a grant of the whole bucket); an object's tags and locks are about its key. */
function guardedSettings(
  g: Guard,
): Pick<
  Storage,
  | "createBucket"
  | "deleteBucket"
  | "readBucketSetting"
  | "setBucketVersioning"
  | "setBucketLifecycle"
  | "setBucketCors"
  | "setBucketPolicy"
  | "getObjectTags"
  | "putObjectTags"
  | "getObjectLock"
  | "setObjectRetention"
  | "setObjectLegalHold"
  | "setDefaultRetention"
> {
  const { storage, need, read } = g;
  return {
    createBucket: async (bucket, signal) => {
      need("write", bucket, "");
      return storage.createBucket(bucket, signal);
    },
    deleteBucket: async (bucket, signal) => {
      need("delete", bucket, "");
      return storage.deleteBucket(bucket, signal);
    },
    // A bucket's settings are about all of it: read or changed under a grant of the whole bucket.
    readBucketSetting: async (bucket, part, signal) => {
      need("read", bucket, "");
      return storage.readBucketSetting(bucket, part, signal);
    },
    setBucketVersioning: async (bucket, status, signal) => {
      need("write", bucket, "");
      return storage.setBucketVersioning(bucket, status, signal);
    },
    setBucketLifecycle: async (bucket, change, signal) => {
      need(change.deletes ? "delete" : "write", bucket, "");
      return storage.setBucketLifecycle(bucket, change, signal);
    },
    setBucketCors: async (bucket, rules, signal) => {
      need("write", bucket, "");
      return storage.setBucketCors(bucket, rules, signal);
    },
    setBucketPolicy: async (bucket, policy, signal) => {
      need("write", bucket, "");
      return storage.setBucketPolicy(bucket, policy, signal);
    },
    getObjectTags: async (addr, signal) => {
      read(addr);
      return storage.getObjectTags(addr, signal);
    },
    putObjectTags: async (addr, tags, signal) => {
      need("write", addr.bucket, addr.key);
      return storage.putObjectTags(addr, tags, signal);
    },
    getObjectLock: async (addr, signal) => {
      read(addr);
      return storage.getObjectLock(addr, signal);
    },
    // Shortening or removing a GOVERNANCE retention lets the object be deleted: the delete level, as S3's own
    // s3:BypassGovernanceRetention sits beside s3:DeleteObject.
    setObjectRetention: async (addr, retention, bypassGovernance, signal) => {
      need(bypassGovernance ? "delete" : "write", addr.bucket, addr.key);
      return storage.setObjectRetention(addr, retention, bypassGovernance, signal);
    },
    // Lifting a hold lets the object be deleted, as bypassing a retention does: the delete level.
    setObjectLegalHold: async (addr, status, signal) => {
      need(status === "OFF" ? "delete" : "write", addr.bucket, addr.key);
      return storage.setObjectLegalHold(addr, status, signal);
    },
    setDefaultRetention: async (bucket, rule, signal) => {
      need("write", bucket, "");
      return storage.setDefaultRetention(bucket, rule, signal);
    },
  };
}
