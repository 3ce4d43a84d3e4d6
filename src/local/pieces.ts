/**
 * Writes a download whose pieces arrive in any order (several ranges at
 * once) at their offsets, and hashes the file in order as its written prefix
 * grows: a large one on another thread that reads the prefix back
 * (hash-thread.ts); otherwise here, a piece that lands where the hashed
 * prefix ends from memory, one that lands further on read back from the file
 * (the page cache) once everything before it is there. The object's own
 * check (MD5 of a single-part ETag, checksums) is fed here while pieces
 * come in order; for a large file, the first that does not hands it to the
 * thread (started then if no sha256 is wanted), which computes it from the
 * first byte.
 * Nothing is held for reordering: memory is the pieces in flight whatever
 * the object's size.
 */
import { createHash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import type { DownloadResume } from "../runtime/kept-transfers.ts";
import { type FileHasher, startFileHasher } from "./hash-thread.ts";

/** Takes the bytes `chunks` (in order) that belong at `offset`; resolves when they are written, and keeps no reference to them after (the caller frees them then). */
export type PieceWriter = (offset: number, chunks: Uint8Array[]) => Promise<void>;

/** What a download hands the writer. */
export interface PieceSource {
  /** Bytes the file will have; undefined when unknown (then pieces come in order). */
  size: number | undefined;
  /** Calls `write` for every byte exactly once (but those in `have`); settles when it will call it no more. */
  fill(write: PieceWriter, have?: readonly [number, number][]): Promise<void>;
  /** Fed every byte in order, as the hash is; `finish` may refuse the whole (the object's own checks). */
  check?: PieceCheck;
  /** Set when a cut download can be kept and resumed (kept-download.ts); `fill` then skips the ranges it is told the file has. */
  resume?: DownloadResume;
}

/** The object's own check of the whole file. */
export interface PieceCheck {
  update(bytes: Uint8Array): void;
  finish(): void;
  /** With `verify`: what it computes (node:crypto names, or crc32), so that the hashing thread can compute it instead. */
  algorithms?: readonly string[];
  /** Checks the digests (hex) the hashing thread computed; throws as `finish` does. */
  verify?(hex: Record<string, string>): void;
}

/** A resumed file's ranges already written, and who hears of each piece written. */
export interface WrittenRanges {
  have: readonly [number, number][];
  written(offset: number, length: number): void;
}

const READ_BACK_BYTES = 1024 * 1024;
/** Downloads this large are hashed on another thread (hash-thread.ts); a smaller one is not worth starting it. */
export const HASH_THREAD_MIN_BYTES = 64 * 1024 * 1024;

/** Writes and checks the pieces; the file's sha256 unless `sha256` is false (a bulk job's files: "" then). */
export async function writePieces(
  out: FileHandle,
  source: PieceSource,
  signal?: AbortSignal,
  sha256 = true,
  ranges?: WrittenRanges,
): Promise<{ bytes: number; sha256: string }> {
  const large = source.size !== undefined && source.size >= HASH_THREAD_MIN_BYTES;
  const hashing: Hashing = { thread: sha256 && large ? startFileHasher(out.fd, ["sha256"]) : undefined };
  try {
    const result = await writeAndHash(out, source, hashing, signal, ranges, {
      sha256: sha256 && !hashing.thread,
      handOver: large && source.check?.algorithms !== undefined && source.check.verify !== undefined,
    });
    if (!hashing.thread) return { bytes: result.bytes, sha256: result.sha256 ?? "" };
    const hex = await hashing.thread.digests(result.bytes);
    if (result.handedOver) source.check!.verify!(hex);
    return { bytes: result.bytes, sha256: sha256 ? hex.sha256! : "" };
  } finally {
    await hashing.thread?.stop();
  }
}

/** A file's hashing thread: started up front for its sha256, or when the object's check is handed over. */
interface Hashing {
  thread: FileHasher | undefined;
}

async function writeAndHash(
  out: FileHandle,
  source: PieceSource,
  hashing: Hashing,
  signal: AbortSignal | undefined,
  ranges: WrittenRanges | undefined,
  here: { sha256: boolean; handOver: boolean },
): Promise<{ bytes: number; sha256?: string; handedOver: boolean }> {
  // In order on this thread: what no thread hashes.
  let check = source.check;
  const hash = here.sha256 ? createHash("sha256") : undefined;
  let feeds = hash !== undefined || check !== undefined;
  const inOrder = (bytes: Uint8Array) => {
    hash?.update(bytes);
    check?.update(bytes);
  };
  let handedOver = false;
  // The file's written prefix, for the hashing thread: every piece once written, start → end.
  const landed = new Map<number, number>();
  let landedTo = 0;
  let hashedTo = 0;
  // Written pieces past the hashed prefix: start → end.
  const written = new Map<number, number>();
  const writes = new Set<Promise<void>>();
  let readBuffer: Buffer | undefined;
  let catchingUp: Promise<void> | undefined;
  let stopped = false;

  // Reads back, in order, the written pieces that now continue the hashed prefix.
  const catchUp = async () => {
    for (let end = written.get(hashedTo); end !== undefined; end = written.get(hashedTo)) {
      written.delete(hashedTo);
      readBuffer ??= Buffer.allocUnsafe(READ_BACK_BYTES);
      for (let at = hashedTo; at < end; ) {
        const { bytesRead } = await out.read(readBuffer, 0, Math.min(readBuffer.length, end - at), at);
        if (bytesRead === 0) throw new Error(`the file ended at ${at} while reading back a piece up to ${end}`);
        inOrder(readBuffer.subarray(0, bytesRead));
        at += bytesRead;
      }
      hashedTo = end;
    }
  };
  const startCatchUp = () => {
    if (catchingUp || !written.has(hashedTo)) return;
    catchingUp = catchUp().finally(() => {
      catchingUp = undefined;
    });
    catchingUp.catch(() => {}); // awaited at the end
  };

  const write: PieceWriter = async (offset, chunks) => {
    if (stopped) throw new Error("the download was stopped");
    signal?.throwIfAborted();
    let length = 0;
    for (const chunk of chunks) length += chunk.length;
    if (source.size !== undefined && offset + length > source.size)
      throw new Error(`a piece at ${offset} of ${length} bytes runs past the object's ${source.size}`);
    // The prefix's next piece: hashed now, from memory.
    const next = feeds && offset === hashedTo && !catchingUp;
    // The first piece out of order (several ranges at once): this thread would read the rest back to feed the check,
    // at the cost of receiving, so the hashing thread computes it from the first byte; in order (one stream), it is
    // fed here from memory, and no thread is started for it.
    if (feeds && !next && here.handOver && !hash) {
      const algorithms = check!.algorithms!;
      if (hashing.thread) hashing.thread.add(algorithms);
      else hashing.thread = startFileHasher(out.fd, algorithms);
      hashing.thread.upTo(landedTo);
      check = undefined;
      feeds = false;
      handedOver = true;
      written.clear(); // nothing is read back here any more; a read-back under way feeds nothing
    }
    if (next) {
      for (const chunk of chunks) inOrder(chunk);
      hashedTo += length;
    }
    const pending = writeAt(out, chunks, offset, length);
    writes.add(pending);
    try {
      await pending;
    } finally {
      writes.delete(pending);
    }
    ranges?.written(offset, length);
    inFile(offset, offset + length, !next);
  };
  // A piece is in the file: read back in order when it is past the hashed prefix, and part of the written prefix.
  const inFile = (start: number, end: number, readBack: boolean) => {
    if (feeds && readBack) written.set(start, end);
    startCatchUp();
    // The written prefix: for the hashing thread, and to find a gap.
    landed.set(start, end);
    for (let to = landed.get(landedTo); to !== undefined; to = landed.get(landedTo)) {
      landed.delete(landedTo);
      landedTo = to;
    }
    hashing.thread?.upTo(landedTo);
  };
  // What a resumed file already has counts as written (and is read back for the hashes like any piece past the prefix).
  for (const [start, end] of ranges?.have ?? []) inFile(start, end, true);

  try {
    await source.fill(write, ranges?.have);
  } finally {
    stopped = true;
    await Promise.allSettled([...writes]);
    await catchingUp?.catch(() => {});
  }
  signal?.throwIfAborted();
  await catchUp();
  const contiguous = feeds ? Math.min(landedTo, hashedTo) : landedTo;
  if (
    written.size > 0 ||
    landed.size > 0 ||
    (source.size !== undefined && contiguous !== source.size) ||
    (feeds && hashedTo !== landedTo)
  ) {
    throw new Error(`the download left a gap: ${contiguous} of ${source.size ?? "?"} bytes are contiguous`);
  }
  check?.finish();
  return { bytes: contiguous, sha256: hash?.digest("hex"), handedOver };
}

/** One positional writev, finished plainly should it come up short (rare on a regular file). */
async function writeAt(out: FileHandle, chunks: Uint8Array[], offset: number, length: number): Promise<void> {
  const { bytesWritten } = await out.writev(chunks, offset);
  if (bytesWritten >= length) return;
  const rest = Buffer.concat(chunks).subarray(bytesWritten);
  for (let w = 0; w < rest.length; )
    w += (await out.write(rest, w, rest.length - w, offset + bytesWritten + w)).bytesWritten;
}
