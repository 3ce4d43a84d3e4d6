import type { WriteEncryption } from "../config/encryption-config.ts";
import type { DownloadResume } from "../runtime/kept-transfers.ts";

/** What uploads and downloads are made of (types.ts re-exports them): the bytes' source, the pieces on their way, the checks that need them in order. */

/** A source's parts a copy keeps (transfer/same-parts.ts): its ETag (lowercase, unquoted), their size (the last may be shorter) and count. */
export interface SourceParts {
  etag: string;
  partSize: number;
  count: number;
}

export interface UploadRequest {
  bucket: string;
  key: string;
  /** Reads the source at `position` into `into`; returns the bytes read, 0 at the end. */
  readAt(into: Uint8Array, position: number): Promise<number>;
  /** The source's bytes from `position` (at most `max`, at least one unless at the end) handed over rather than copied, when the source can. */
  takeAt?(position: number, max: number): Promise<Uint8Array>;
  /** All of the source's bytes, already in memory (a small object read whole): an upload in one PUT sends them as they are. */
  bytes?: Uint8Array;
  /**
   * Fills `into` with the source's bytes at `position` once more, read from where they came from (bytes already
   * taken are gone), refusing them unless `sameAsFirst` says they are those first taken: a streamed part sent again.
   */
  rereadAt?(into: Uint8Array, position: number, sameAsFirst: (bytes: Uint8Array) => boolean): Promise<void>;
  /** Bytes `start` to `end` (exclusive) of the source as a Blob the HTTP client reads itself, when the source can. */
  slice?(start: number, end: number): Blob;
  size: number;
  /**
   * Where the bytes come from, to know a cut multipart upload of them again (upload-resume.ts): a local file (its
   * real path; version, its modification time) or another store's object (version, its ETag). `trusted`: the source
   * is pinned to that version (an ETag), so a part the store lists counts without reading the bytes again.
   */
  source?: { id: string; version: string; trusted?: boolean };
  /**
   * Whether this call may abort a kept upload of another key of its bucket (one expired on the way): set by the
   * caller's guard (access/guarded-storage.ts) to what its policy lets the call write. Absent: every key of the bucket.
   */
  mayAbort?: (bucket: string, key: string) => boolean;
  contentType: string;
  storageClass?: string;
  /** Encryption at rest the call asks for; absent: the store's, if it has one. */
  encryption?: WriteEncryption;
  cacheControl?: string;
  /** User metadata to store with the object (e.g. the source file's mtime). */
  metadata?: Record<string, string>;
  /** Told the bytes stored so far, after each part. */
  onProgress?: (done: number) => void;
  /**
   * How the bytes go out when the store takes them streamed (`streamingFor`
   * said so): "whole", one streamed PutObject with `wholeMd5` as its
   * Content-MD5, which the store checks (streamed-put.ts); "parts", a
   * multipart upload whose parts are streamed bodies (streamed-parts.ts).
   */
  streamed?: "whole" | "parts";
  /**
   * A copy of another store's multipart object: its parts as inferred
   * (same-parts.ts). A store that composes part ETags (quirks.ts) is sent the
   * same parts unhashed, and their ETags must compose the source's before the
   * upload completes; any other ignores it.
   */
  sameParts?: SourceParts;
  /**
   * The MD5 (hex) the whole body has, known before its bytes (a copy from a
   * single-part source: its ETag): a streamed PUT's or a single PUT's
   * Content-MD5, so the store checks the bytes against it and none is
   * hashed here.
   */
  wholeMd5?: string;
}

export interface UploadResult {
  etag: string | null;
  version_id: string | null;
}

/**
 * Takes the bytes `chunks` (in order) that belong at `offset`. Resolves
 * "kept" when it keeps the chunks (then they are its to free); otherwise it
 * keeps no reference to them and the caller frees them once it resolves.
 */
export type PieceSink = (offset: number, chunks: Uint8Array[]) => Promise<"kept" | undefined | void>;

export interface ObjectDownloadOptions {
  /** Told the bytes received so far, over all ranges. */
  onProgress?: (received: number) => void;
  /** The object as a listing just showed it: a small single-part one is then fetched with one cheap GET pinned to that ETag. */
  listed?: { size: number; etag: string | null };
  /**
   * The reader is slower than the store (a copy to another store): after the
   * first range, ranges one after another instead of one stream from a near
   * store, so the object waits in the store and not in this process; from a
   * far one, more ranges at once only while the reader waits (`deliver`'s
   * `wantsMore`).
   */
  paced?: boolean;
}

/** An object on its way: its pieces, several at once and in any order, and the checks that need them in order. */
export interface ObjectDownload {
  meta: ObjectMeta;
  /** What a copy carries over with the bytes (from the first answer's headers). */
  carried: { cache_control: string | null; metadata: Record<string, string> };
  /** Bytes the object has; undefined when the store did not say (then the pieces come in order). */
  size: number | undefined;
  /** Hands every byte to `sink` exactly once, at its offset (but those in `have`, a resumed download's); settles when every request has ended. */
  deliver(sink: PieceSink, wantsMore?: () => boolean, have?: readonly [number, number][]): Promise<void>;
  /** Set when a cut download of this object can be resumed (a ranged download of an object with an ETag and a size). */
  resume?: DownloadResume;
  /** Fed the whole body in order; `finish` throws when it broke the object's MD5 or checksums. Absent when there is nothing to check (a multipart ETag, no checksums). */
  check?: OrderedCheck;
  /** The MD5 (hex) of the whole object, as its ETag promises it (a single-part object not encrypted with KMS or a customer key). */
  md5?: string;
  /** A multipart object's ETag as its store composed it from its parts' MD5s (same-parts.ts, composedEtagOf): what a copy in the same parts can be held to. */
  composedEtag?: string;
  /**
   * The whole body, when it came in one answer read into memory (a listed small object): taken instead of `deliver`,
   * never beside it (delivered bytes are freed once written). Unchecked: `check` or the destination's own check of
   * `md5` is the taker's to make.
   */
  bytes?: Uint8Array;
  discard(): void;
}

export interface OrderedCheck {
  update(bytes: Uint8Array): void;
  finish(): void;
  /** What it computes (node:crypto names, or crc32), for a reader that hashes the body elsewhere (another thread). */
  readonly algorithms: readonly string[];
  /** Checks digests computed elsewhere (hex, one per algorithm; crc32's big-endian) instead of `update` and `finish`; throws as `finish` does. */
  verify(hex: Record<string, string>): void;
}

/** What a read tells of the object besides its bytes. */
export interface ObjectMeta {
  content_type: string | null;
  /** The whole object's size, not just the bytes fetched. */
  size: number;
  etag: string | null;
  last_modified: string | null;
  version_id: string | null;
  /** How the store encrypted it; null: not said (absent where no GET was made, e.g. an archive member). */
  encryption?: ObjectEncryption | null;
}

/** An object's encryption at rest as the store reports it: its algorithm, KMS key, or a customer key's algorithm. */
export interface ObjectEncryption {
  algorithm: string;
  kms_key_id?: string;
  customer_algorithm?: string;
}
