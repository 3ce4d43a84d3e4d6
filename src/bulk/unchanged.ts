/**
 * "Unchanged", decided cheaply, as the README's bulk section explains:
 * - same size, and the same MD5 where the ETag is one (a single-part upload
 *   without KMS encryption: 32 hex digits) — as strong as a checksum;
 * - otherwise (a multipart ETag) same size, and the file's modification time
 *   recorded at upload (`mtime` metadata, read with one HEAD) equal to the
 *   file's; for an object we did not upload, the object not older than the
 *   file — weaker than a checksum: a file rewritten to the same size with its
 *   time set back is not seen.
 */
import type { ObjectInfo } from "../storage/index.ts";

/** What a comparison needs of an object: an index of 100,000 keys holds this, not the listing's whole entry. */
export interface ObjectState {
  size: number;
  etag: string | null;
  /** Last modified, in ms since the epoch (NaN when the store did not say). */
  modifiedMs: number;
}

export function stateOf(o: ObjectInfo): ObjectState {
  return { size: o.size, etag: o.etag, modifiedMs: o.last_modified ? Date.parse(o.last_modified) : Number.NaN };
}

/** The MD5 an ETag promises (hex), or undefined for a multipart or encrypted one. */
export function etagMd5(etag: string | null | undefined): string | undefined {
  const bare = etag?.replaceAll('"', "").toLowerCase();
  return bare && /^[0-9a-f]{32}$/.test(bare) ? bare : undefined;
}

/** The metadata a bulk upload stores: the file's mtime in seconds (rclone's `mtime` convention). */
export function mtimeMetadata(mtimeMs: number): Record<string, string> {
  return { mtime: (mtimeMs / 1000).toFixed(3) };
}

/**
 * Whether an object holds the same content as a local file of `size` bytes
 * modified at `mtimeMs`. `md5` reads the file, only when the ETag can answer;
 * `storedMtime` asks the store for the `mtime` metadata (a HEAD), only for a
 * multipart object of the same size.
 */
export async function sameAsLocal(
  object: ObjectState,
  size: number,
  mtimeMs: number,
  md5: () => Promise<string>,
  storedMtime: () => Promise<string | undefined>,
): Promise<boolean> {
  if (object.size !== size) return false;
  const promised = etagMd5(object.etag);
  if (promised) return (await md5()) === promised;
  const recorded = await storedMtime();
  if (recorded !== undefined) return recorded === mtimeMetadata(mtimeMs).mtime;
  // Not uploaded by us: stores keep whole seconds; unchanged if not modified after the object was written.
  return Math.floor(mtimeMs / 1000) <= Math.floor(object.modifiedMs / 1000);
}

/** For a local file written by a download (its mtime set to the object's): whether it is still the object. */
export async function localIsObject(
  object: ObjectState,
  size: number,
  mtimeMs: number,
  md5: () => Promise<string>,
): Promise<boolean> {
  if (object.size !== size) return false;
  const promised = etagMd5(object.etag);
  if (promised) return (await md5()) === promised;
  return Math.floor(mtimeMs / 1000) === Math.floor(object.modifiedMs / 1000);
}

/** For a server-side copy: whether the destination already holds the source. */
export function sameObject(source: ObjectState, target: ObjectState): boolean {
  if (source.size !== target.size) return false;
  const a = etagMd5(source.etag);
  const b = etagMd5(target.etag);
  if (a && b) return a === b;
  if (source.etag && source.etag === target.etag) return true;
  return target.modifiedMs >= source.modifiedMs;
}

/** The MD5 (hex) of a source read at offsets (a walked file's descriptor). */
export async function md5OfSource(
  readAt: (into: Uint8Array, position: number) => Promise<number>,
  size: number,
): Promise<string> {
  const { createHash } = await import("node:crypto");
  const hash = createHash("md5");
  const buffer = new Uint8Array(Math.max(1, Math.min(size, 1024 * 1024)));
  for (let position = 0; ; ) {
    const n = await readAt(buffer, position);
    if (n === 0) break;
    hash.update(buffer.subarray(0, n));
    position += n;
  }
  return hash.digest("hex");
}
