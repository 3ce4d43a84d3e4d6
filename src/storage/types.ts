/** Domain types of the storage layer: plain data, no AWS SDK types leak out. */

export interface BucketInfo {
  name: string;
  creation_date: string | null;
}

export interface ObjectInfo {
  key: string;
  size: number;
  last_modified: string | null;
  etag: string | null;
  storage_class: string | null;
}

export interface ListObjectsRequest {
  bucket: string;
  prefix?: string;
  delimiter?: string;
  maxKeys: number;
  continuationToken?: string;
}

export interface ObjectPage {
  objects: ObjectInfo[];
  common_prefixes: string[];
  is_truncated: boolean;
  next_continuation_token: string | null;
  /** The store sent more than max_keys; the page was cut, so its continuation may skip keys. */
  store_ignored_max_keys?: boolean;
}

export interface ObjectMeta {
  content_type: string | null;
  /** The whole object's size, not just the bytes fetched. */
  size: number;
  etag: string | null;
  last_modified: string | null;
  version_id: string | null;
}

export interface ObjectAddress {
  bucket: string;
  key: string;
  versionId?: string;
}

export interface UploadRequest {
  bucket: string;
  key: string;
  /** Reads the source at `position` into `into`; returns the bytes read, 0 at the end. */
  readAt(into: Uint8Array, position: number): Promise<number>;
  size: number;
  contentType: string;
  storageClass?: string;
  cacheControl?: string;
}

export interface UploadResult {
  etag: string | null;
  version_id: string | null;
}

export interface Storage {
  listBuckets(signal?: AbortSignal): Promise<BucketInfo[]>;
  createBucket(bucket: string, signal?: AbortSignal): Promise<{ location: string | null }>;
  deleteBucket(bucket: string, signal?: AbortSignal): Promise<void>;
  listObjects(req: ListObjectsRequest, signal?: AbortSignal): Promise<ObjectPage>;
  /** The first `maxBytes` bytes of an object, fetched with a ranged GET. */
  readObjectHead(addr: ObjectAddress, maxBytes: number, signal?: AbortSignal): Promise<{ meta: ObjectMeta; bytes: Uint8Array }>;
  /** The whole object as a stream; the caller must call `discard` when done with it, consumed or not (it frees the connection). */
  openObjectStream(addr: ObjectAddress, signal?: AbortSignal): Promise<{ meta: ObjectMeta; body: AsyncIterable<Uint8Array>; discard(): void }>;
  uploadObject(req: UploadRequest, signal?: AbortSignal): Promise<UploadResult>;
}
