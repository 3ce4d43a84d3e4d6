/** How a multipart upload or copy is cut: the part size for an object's size, and how many parts go at once. */

const MiB = 1024 * 1024;
/** S3's limits: at most 10,000 parts, each at least 5 MiB (but the last). */
export const MAX_PARTS = 10_000;
/**
 * 5 MiB, S3's minimum part: larger parts are only a little faster and raise
 * the peak (the upload shapes of `npm run bench`). Memory is the figure users
 * feel on a laptop.
 */
export const MIN_PART_SIZE = 5 * MiB;
/** Parts buffered at once stay under this, whatever the file size. */
const BUFFER_BUDGET = 64 * MiB;

/**
 * Part size for a file: 5 MiB, grown in whole MiB so that even a 5 TiB file
 * fits in 10,000 parts.
 */
export function partSizeFor(size: number): number {
  const needed = Math.ceil(size / MAX_PARTS / MiB) * MiB;
  return Math.max(MIN_PART_SIZE, needed);
}

/** Whether `size` bytes go as one PutObject (upload.ts), not a multipart upload. */
export function fitsOnePart(size: number): boolean {
  return size <= partSizeFor(size);
}

/**
 * Parts uploaded concurrently: 3 to a near store; to a far one 12 sent from
 * the file, or 4 from another store (streamed, or read into buffers: then
 * fewer when parts are huge, to bound memory): more raised a WAN-model copy's
 * peak for no speed (BENCH_ONLY=ab, docs/performance.md). Near, more in flight raises the
 * peak for little speed; far, one connection carries little (window / round trip), so parts in flight make the
 * speed (the loopback and WAN-model uploads of `npm run bench`).
 */
export function queueSizeFor(partSize: number, far = false, fromFile = false, streamed = false): number {
  // Parts sent from the file hold only a hashing buffer each: more may go out at once.
  if (fromFile) return far ? 12 : 3;
  if (streamed) return far ? 4 : 3;
  return Math.max(1, Math.min(far ? 4 : 3, Math.floor(BUFFER_BUDGET / partSize)));
}
