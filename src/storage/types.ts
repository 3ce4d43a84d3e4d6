/** Domain types of the storage layer: plain data, no AWS SDK types leak out. */

import type { WriteEncryption } from "../config/encryption-config.ts";
import type { ObjectAddress } from "./address.ts";
import type { LockAndRestoreStore, SettingsStore } from "./settings-types.ts";
import type {
  ObjectDownload,
  ObjectDownloadOptions,
  ObjectEncryption,
  ObjectMeta,
  UploadRequest,
  UploadResult,
} from "./transfer-types.ts";

// What uploads, downloads and settings are made of lives beside (transfer-types.ts, settings-types.ts, address.ts);
// importers keep taking it from here.
export type { ObjectAddress } from "./address.ts";
export type {
  CorsRule,
  LifecycleRule,
  LockAndRestoreStore,
  RestoreTier,
  SettingPart,
  SettingsStore,
} from "./settings-types.ts";
export type {
  ObjectDownload,
  ObjectDownloadOptions,
  ObjectEncryption,
  ObjectMeta,
  OrderedCheck,
  PieceSink,
  UploadRequest,
  UploadResult,
} from "./transfer-types.ts";

export interface BucketInfo {
  name: string;
  creation_date: string | null;
}

/** One ListBuckets page: names starting with `prefix`, at most `maxBuckets`, after `continuationToken`. */
export interface BucketsRequest {
  prefix?: string;
  maxBuckets?: number;
  continuationToken?: string;
}

export interface BucketPage {
  buckets: BucketInfo[];
  next_continuation_token: string | null;
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
  /** List keys after this one (ListObjectsV2 StartAfter): where a bulk scan resumes. */
  startAfter?: string;
}

export interface ObjectPage {
  objects: ObjectInfo[];
  common_prefixes: string[];
  is_truncated: boolean;
  next_continuation_token: string | null;
  /** The store sent more than max_keys; the page was cut, so its continuation may skip keys. */
  store_ignored_max_keys?: boolean;
}

/** A multipart upload that was started and never completed or aborted: its parts are stored (and billed) but no object shows them. */
export interface IncompleteUpload {
  key: string;
  upload_id: string;
  initiated: string | null;
  /** Bytes of the parts stored so far; null when they were not counted (past the parts budget). */
  bytes: number | null;
}

export interface Storage extends ObjectStore, SettingsStore, LockAndRestoreStore {
  listBuckets(req: BucketsRequest, signal?: AbortSignal): Promise<BucketPage>;
  /** Whether the bucket exists and these credentials reach it (HeadBucket): throws NoSuchBucket, AccessDenied… */
  headBucket(bucket: string, signal?: AbortSignal): Promise<void>;
  createBucket(bucket: string, signal?: AbortSignal): Promise<{ location: string | null }>;
  deleteBucket(bucket: string, signal?: AbortSignal): Promise<void>;
  listObjects(req: ListObjectsRequest, signal?: AbortSignal): Promise<ObjectPage>;
  /**
   * At most `maxBytes` bytes of an object from byte `offset` on, fetched with one ranged GET; with `etag`, only from
   * the object of that ETag (a changed object fails PreconditionFailed).
   */
  readObjectHead(
    addr: ObjectAddress,
    maxBytes: number,
    signal?: AbortSignal,
    offset?: number,
    etag?: string,
  ): Promise<{ meta: ObjectMeta; bytes: Uint8Array }>;
  /** The whole object, to be written where its pieces belong; the caller must call `discard` when done with it, delivered or not (it frees the connections). `onProgress` hears the bytes received so far. */
  openObjectDownload(
    addr: ObjectAddress,
    signal?: AbortSignal,
    options?: ObjectDownloadOptions,
  ): Promise<ObjectDownload>;
  uploadObject(req: UploadRequest, signal?: AbortSignal): Promise<UploadResult>;
  /**
   * Whether `req` (its bytes handed over by `takeAt`) would be sent streamed: "whole" (one PutObject) when the MD5 of its
   * whole body is known and fits one PUT, "parts" when it is larger than a part; undefined for parts read into buffers.
   */
  streamingFor(
    req: UploadRequest,
    wholeMd5: string | undefined,
    signal?: AbortSignal,
  ): Promise<"whole" | "parts" | undefined>;
  /** A copy from another store into this one, streamed through the server and verified (cross-copy.ts); `nameSource` relabels the source side's errors. */
  copyFrom(
    source: Storage,
    req: CopyRequest,
    signal?: AbortSignal,
    nameSource?: (err: unknown) => unknown,
  ): Promise<CopyResult>;
  /** Whether uploading `req` would continue a multipart upload a cut kept (runtime/kept-transfers.ts). */
  hasKeptUpload(req: UploadRequest): boolean;
  /** Incomplete multipart uploads under a prefix, at most `limit`; the parts of the first `sizeLimit` are counted. */
  listIncompleteUploads(
    bucket: string,
    prefix: string,
    limit: number,
    sizeLimit: number,
    signal?: AbortSignal,
  ): Promise<{ uploads: IncompleteUpload[]; more: boolean }>;
}

/** What HeadObject tells about an object, without its body. */
export interface ObjectHead {
  size: number | null;
  content_type: string | null;
  etag: string | null;
  last_modified: string | null;
  version_id: string | null;
  storage_class: string | null;
  cache_control: string | null;
  content_encoding: string | null;
  content_disposition: string | null;
  metadata: Record<string, string>;
  /** Checksums the store reports, by algorithm (crc32, crc32c, crc64nvme, sha1, sha256). */
  checksums: Record<string, string>;
  delete_marker: boolean;
  /** How the store encrypted it (x-amz-server-side-encryption, its KMS key, or a customer key's algorithm); null: not said. */
  encryption?: ObjectEncryption | null;
  /** An archived object's restore (x-amz-restore): under way, or a copy available until a date; null: none asked for. */
  restore?: { in_progress: boolean; expires?: string } | null;
  /** An Intelligent-Tiering object's archive tier (x-amz-archive-status: ARCHIVE_ACCESS, DEEP_ARCHIVE_ACCESS); null: none. */
  archive_status?: string | null;
  /** Object lock: retention mode and date, and the legal hold, as the store reports them; null: none. */
  object_lock?: { mode?: string; retain_until?: string; legal_hold?: string } | null;
}

export interface WriteOptions {
  contentType?: string;
  cacheControl?: string;
  storageClass?: string;
  metadata?: Record<string, string>;
  /** Write only if nothing exists at the key (If-None-Match: *). */
  ifAbsent?: boolean;
  /** Encryption at rest the call asks for; absent: the store's (STORE_SSE…), if it has one. */
  encryption?: WriteEncryption;
}

export interface PutRequest extends WriteOptions {
  bucket: string;
  key: string;
  body: Uint8Array;
}

export interface CopyRequest extends WriteOptions {
  source: ObjectAddress;
  bucket: string;
  key: string;
  /** COPY keeps the source's metadata and headers; REPLACE uses the ones given. */
  metadataDirective: "COPY" | "REPLACE";
  /** Told the object's size once known, then the bytes copied so far after each part. */
  onProgress?: (done: number, total: number) => void;
  /** The source as a listing just showed it (a bulk copy): saves the HEAD of a one-request copy; the copy is still pinned to this ETag. */
  listed?: { size: number; etag: string | null };
  /** The source store's name, for a copy between stores: what a cut copy is known again by, with the source's ETag. */
  sourceStore?: string;
}

export interface CopyResult extends UploadResult {
  size: number;
  multipart: boolean;
  source_version_id: string | null;
}

export interface DeleteResult {
  /** True when the delete created (or removed) a delete marker. */
  delete_marker: boolean;
  version_id: string | null;
}

export interface DeleteManyResult {
  deleted: { key: string; delete_marker: boolean }[];
  failed: { key: string; code: string; message: string }[];
}

export interface VersionsRequest {
  bucket: string;
  prefix?: string;
  maxKeys: number;
  keyMarker?: string;
  versionIdMarker?: string;
}

export interface VersionInfo {
  key: string;
  version_id: string | null;
  is_latest: boolean;
  is_delete_marker: boolean;
  size: number | null;
  last_modified: string | null;
  etag: string | null;
}

export interface VersionsPage {
  versions: VersionInfo[];
  is_truncated: boolean;
  next_key_marker: string | null;
  next_version_id_marker: string | null;
}

export interface PresignRequest extends ObjectAddress {
  method: "GET" | "PUT";
  expiresIn: number;
  contentType?: string;
  responseContentDisposition?: string;
}

export interface ObjectStore {
  headObject(addr: ObjectAddress, signal?: AbortSignal): Promise<ObjectHead>;
  putObject(req: PutRequest, signal?: AbortSignal): Promise<UploadResult>;
  copyObject(req: CopyRequest, signal?: AbortSignal): Promise<CopyResult>;
  deleteObject(addr: ObjectAddress, signal?: AbortSignal): Promise<DeleteResult>;
  /** Deletes these keys (latest versions) in batches of 1,000. */
  deleteObjects(bucket: string, keys: string[], signal?: AbortSignal): Promise<DeleteManyResult>;
  /** Keys under a prefix, at most `limit` (and whether more exist). */
  listKeys(
    bucket: string,
    prefix: string,
    limit: number,
    signal?: AbortSignal,
  ): Promise<{ keys: string[]; more: boolean }>;
  listObjectVersions(req: VersionsRequest, signal?: AbortSignal): Promise<VersionsPage>;
  presign(req: PresignRequest): Promise<{ url: string; headers: Record<string, string> }>;
}
