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
 * the object's size. Each piece is written with a synchronous positional
 * write (writeAt says why).
 */
import { createHash, type Hash } from "node:crypto";
import { writevSync } from "node:fs";
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
  return new PieceWriting(out, source, hashing, signal, ranges, here).run();
}

/** One file's writing: each piece written where it belongs, and hashed in order on this thread (what no thread hashes) as the prefix grows. */
class PieceWriting {
  #check: PieceCheck | undefined;
  readonly #hash: Hash | undefined;
  /** Whether this thread hashes anything in order (false once the object's check is handed over and no sha256 is wanted here). */
  #feeds: boolean;
  #handedOver = false;
  /** The file's written prefix, for the hashing thread: every piece once written, start → end. */
  readonly #landed = new Map<number, number>();
  #landedTo = 0;
  #hashedTo = 0;
  /** Written pieces past the hashed prefix: start → end. */
  readonly #written = new Map<number, number>();
  readonly #writes = new Set<Promise<void>>();
  #readBuffer: Buffer | undefined;
  #catchingUp: Promise<void> | undefined;
  #stopped = false;

  constructor(
    readonly out: FileHandle,
    readonly source: PieceSource,
    readonly hashing: Hashing,
    readonly signal: AbortSignal | undefined,
    readonly ranges: WrittenRanges | undefined,
    readonly here: { sha256: boolean; handOver: boolean },
  ) {
    this.#check = source.check;
    this.#hash = here.sha256 ? createHash("sha256") : undefined;
    this.#feeds = this.#hash !== undefined || this.#check !== undefined;
  }

  async run(): Promise<{ bytes: number; sha256?: string; handedOver: boolean }> {
    // What a resumed file already has counts as written (and is read back for the hashes like any piece past the prefix).
    for (const [start, end] of this.ranges?.have ?? []) this.#inFile(start, end, true);
    try {
      await this.source.fill(this.write, this.ranges?.have);
    } finally {
      this.#stopped = true;
      await Promise.allSettled([...this.#writes]);
      await this.#catchingUp?.catch(() => {});
    }
    this.signal?.throwIfAborted();
    await this.#catchUp();
    const contiguous = this.#feeds ? Math.min(this.#landedTo, this.#hashedTo) : this.#landedTo;
    const size = this.source.size;
    if (
      this.#written.size > 0 ||
      this.#landed.size > 0 ||
      (size !== undefined && contiguous !== size) ||
      (this.#feeds && this.#hashedTo !== this.#landedTo)
    ) {
      throw new Error(`the download left a gap: ${contiguous} of ${size ?? "?"} bytes are contiguous`);
    }
    this.#check?.finish();
    return { bytes: contiguous, sha256: this.#hash?.digest("hex"), handedOver: this.#handedOver };
  }

  readonly write: PieceWriter = async (offset, chunks) => {
    if (this.#stopped) throw new Error("the download was stopped");
    this.signal?.throwIfAborted();
    let length = 0;
    for (const chunk of chunks) length += chunk.length;
    const size = this.source.size;
    if (size !== undefined && offset + length > size)
      throw new Error(`a piece at ${offset} of ${length} bytes runs past the object's ${size}`);
    // The prefix's next piece: hashed now, from memory.
    const next = this.#feeds && offset === this.#hashedTo && !this.#catchingUp;
    // The first piece out of order (several ranges at once): this thread would read the rest back to feed the check,
    // at the cost of receiving, so the hashing thread computes it from the first byte; in order (one stream), it is
    // fed here from memory, and no thread is started for it.
    if (this.#feeds && !next && this.here.handOver && !this.#hash) this.#handOver();
    if (next) {
      for (const chunk of chunks) this.#inOrder(chunk);
      this.#hashedTo += length;
    }
    const pending = writeAt(this.out, chunks, offset, length);
    this.#writes.add(pending);
    try {
      await pending;
    } finally {
      this.#writes.delete(pending);
    }
    this.ranges?.written(offset, length);
    this.#inFile(offset, offset + length, !next);
  };

  #inOrder(bytes: Uint8Array): void {
    this.#hash?.update(bytes);
    this.#check?.update(bytes);
  }

  /** The object's check goes to the hashing thread (started now if no sha256 is wanted), from the first byte. */
  #handOver(): void {
    const algorithms = this.#check!.algorithms!;
    if (this.hashing.thread) this.hashing.thread.add(algorithms);
    else this.hashing.thread = startFileHasher(this.out.fd, algorithms);
    this.hashing.thread.upTo(this.#landedTo);
    this.#check = undefined;
    this.#feeds = false;
    this.#handedOver = true;
    this.#written.clear(); // nothing is read back here any more; a read-back under way feeds nothing
  }

  /** A piece is in the file: read back in order when it is past the hashed prefix, and part of the written prefix. */
  #inFile(start: number, end: number, readBack: boolean): void {
    if (this.#feeds && readBack) this.#written.set(start, end);
    this.#startCatchUp();
    // The written prefix: for the hashing thread, and to find a gap.
    this.#landed.set(start, end);
    for (let to = this.#landed.get(this.#landedTo); to !== undefined; to = this.#landed.get(this.#landedTo)) {
      this.#landed.delete(this.#landedTo);
      this.#landedTo = to;
    }
    this.hashing.thread?.upTo(this.#landedTo);
  }

  #startCatchUp(): void {
    if (this.#catchingUp || !this.#written.has(this.#hashedTo)) return;
    this.#catchingUp = this.#catchUp().finally(() => {
      this.#catchingUp = undefined;
    });
    this.#catchingUp.catch(() => {}); // awaited at the end
  }

  /** Reads back, in order, the written pieces that now continue the hashed prefix. */
  async #catchUp(): Promise<void> {
    for (let end = this.#written.get(this.#hashedTo); end !== undefined; end = this.#written.get(this.#hashedTo)) {
      this.#written.delete(this.#hashedTo);
      this.#readBuffer ??= Buffer.allocUnsafe(READ_BACK_BYTES);
      for (let at = this.#hashedTo; at < end; ) {
        const { bytesRead } = await this.out.read(this.#readBuffer, 0, Math.min(this.#readBuffer.length, end - at), at);
        if (bytesRead === 0) throw new Error(`the file ended at ${at} while reading back a piece up to ${end}`);
        this.#inOrder(this.#readBuffer.subarray(0, bytesRead));
        at += bytesRead;
      }
      this.#hashedTo = end;
    }
  }
}

/**
 * One positional writev, finished plainly should it come up short (rare on a
 * regular file). Synchronous, on this thread: a 256 KiB piece into the page
 * cache takes it ~0.1 ms, while the handle's writev went through the thread
 * pool and back for each and held the piece until it came back (up to 4 a
 * range, 16 ranges far away); written here, a 256 MiB download through the
 * WAN model peaks 5-7 MB lower for the same CPU (docs/performance.md). The
 * price: the event loop waits for the write's kernel time, and for the
 * kernel's pacing when the page cache is full of unwritten pages, which is
 * then the download's pace anyway.
 */
async function writeAt(out: FileHandle, chunks: Uint8Array[], offset: number, length: number): Promise<void> {
  const bytesWritten = writevSync(out.fd, chunks, offset);
  if (bytesWritten >= length) return;
  const rest = Buffer.concat(chunks).subarray(bytesWritten);
  for (let w = 0; w < rest.length; )
    w += (await out.write(rest, w, rest.length - w, offset + bytesWritten + w)).bytesWritten;
}
