/**
 * Every storage operation, and the buckets and keys (or prefixes) it
 * touches: the method list the decorators over Storage share. It is typed
 * as a mapped type over Storage, so a method added there without an entry
 * here does not compile, and the unit test holds a real store's methods
 * against it (and against each decorator). The allowlist decorator checks
 * each touch; the caller policy's decorator (guarded-storage.ts) needs a
 * level and narrows listings, so it states its own rules per method, over
 * the same list.
 */
import type { Storage } from "../storage/index.ts";

/**
 * A bucket, and the key in it whose name goes into the request's path (none: the bucket as a whole, or a listing,
 * whose prefix travels as a query parameter no proxy resolves).
 */
export interface Touch {
  bucket: string;
  key?: string;
}

type Touches = { [M in keyof Storage]: (...args: Parameters<Storage[M]>) => Touch[] };

const object = (addr: { bucket: string; key: string }): Touch[] => [{ bucket: addr.bucket, key: addr.key }];
const bucket = (name: string): Touch[] => [{ bucket: name }];

export const STORAGE_TOUCHES: Touches = {
  // Filtered, not refused: a listing of buckets shows only the ones allowed.
  listBuckets: () => [],
  headBucket: bucket,
  createBucket: bucket,
  deleteBucket: bucket,
  listObjects: (req) => bucket(req.bucket),
  readObjectHead: object,
  openObjectDownload: object,
  uploadObject: object,
  streamingFor: object,
  // The source is another store's storage, decorated by its own rules.
  copyFrom: (_source, req) => object(req),
  // This server's own record of a cut upload: nothing of the store is read.
  hasKeptUpload: () => [],
  listIncompleteUploads: (name) => bucket(name),
  headObject: object,
  putObject: object,
  copyObject: (req) => [...object(req.source), ...object(req)],
  deleteObject: object,
  deleteObjects: (name, keys) => keys.map((key) => ({ bucket: name, key })),
  listKeys: (name) => bucket(name),
  listObjectVersions: (req) => bucket(req.bucket),
  presign: object,
  readBucketSetting: bucket,
  setBucketVersioning: bucket,
  setBucketLifecycle: bucket,
  setBucketCors: bucket,
  setBucketPolicy: bucket,
  getObjectTags: object,
  putObjectTags: object,
  getObjectLock: object,
  setObjectRetention: object,
  setObjectLegalHold: object,
  setDefaultRetention: bucket,
  restoreObject: object,
};

/** The methods that answer at once rather than with a promise. */
export const SYNC_METHODS: ReadonlySet<keyof Storage> = new Set(["hasKeptUpload"]);
