/**
 * Bytes from one store on their way to another: a download delivers pieces
 * at their offsets (several ranges at once, in any order), an upload reads
 * them back by position (several parts at once). Bytes are handed out only
 * once every byte before them has arrived and been fed to the source's own
 * check (its MD5 or checksums), and the check is finished before the last
 * bytes are handed out: an upload can never complete with bytes that did
 * not verify. Memory is bounded: once `limit` bytes are held, pieces wait,
 * except the one that extends the verified prefix while a reader waits for
 * more (so readers always progress). Each byte is read once, then dropped.
 */
import { memoryPacer, releaseChunks } from "../../runtime/memory.ts";
import type { OrderedCheck } from "../types.ts";

/** A full collection after this many bytes passed through (memory.ts): what the SDK and fetch leave of the parts sent. */
const GC_EVERY = 64 * 1024 * 1024;

interface Held {
  start: number;
  bytes: Uint8Array;
  /** Bytes of it read so far. */
  read: number;
}

export class PiecePipe {
  /** Arrived, not yet verified: by offset. */
  readonly #pending = new Map<number, Uint8Array[]>();
  /** Verified and not yet read whole, in order. */
  readonly #ready: Held[] = [];
  #verifiedTo = 0;
  #held = 0;
  #failure: { err: unknown } | undefined;
  #readers: (() => void)[] = [];
  #writers: (() => void)[] = [];
  /** Where each reader waiting for bytes past the verified prefix waits. */
  readonly #waitingFor: number[] = [];
  readonly #pace = memoryPacer(GC_EVERY);
  /** Time readers waited for the very next bytes since #markedAt, and when the current such wait began. */
  #starvedMs = 0;
  #starvedSince: number | undefined;
  #markedAt = performance.now();

  constructor(
    readonly size: number,
    private readonly limit: number,
    private readonly check: Pick<OrderedCheck, "update" | "finish"> | undefined,
  ) {}

  /**
   * The share of the time since the last call (0 to 1) that a reader spent waiting for the very next bytes: the
   * source, not the destination, setting the pace. (Whether one waits at the moment a range ends said no nearly
   * always: by then the range after it had arrived in part and the reader was busy with it, so a far source's copy
   * stayed at two ranges, several times slower.)
   */
  starvedShare(): number {
    const now = performance.now();
    let starved = this.#starvedMs;
    if (this.#starvedSince !== undefined) {
      starved += now - this.#starvedSince;
      this.#starvedSince = now;
    }
    const share = starved / Math.max(1, now - this.#markedAt);
    this.#starvedMs = 0;
    this.#markedAt = now;
    return share;
  }

  /** Stops everything: waiting readers and writers get `err`. */
  fail(err: unknown): void {
    this.#failure ??= { err };
    this.#wake();
  }

  /** A piece of the source at `offset`: its chunks are the pipe's from now on (freed once read). */
  async write(offset: number, chunks: Uint8Array[]): Promise<"kept" | undefined> {
    // Over the limit a piece waits, unless it extends the verified prefix while a reader waits for more
    // (readers only wait for bytes past the prefix, so taking it is what lets them go on and free memory).
    while (!this.#failure && this.#held > this.limit && (offset > this.#verifiedTo || this.#waitingFor.length === 0))
      await new Promise<void>((go) => this.#writers.push(go));
    if (this.#failure) throw this.#failure.err;
    // Kept as they came, not copied: every copy was one more buffer for the allocator to hold on to.
    const kept = chunks.filter((chunk) => chunk.length > 0);
    if (kept.length === 0) return undefined;
    this.#pending.set(offset, kept);
    for (const chunk of kept) this.#held += chunk.length;
    this.#verify();
    this.#wake();
    return "kept";
  }

  /** Up to `into.length` bytes from `position`, once verified; 0 at the end. */
  async readAt(into: Uint8Array, position: number): Promise<number> {
    if (!(await this.#verifiedPast(position))) return 0;
    const at = this.#find(position);
    const held = this.#ready[at]!;
    const from = position - held.start;
    const n = Math.min(into.length, held.bytes.length - from);
    into.set(held.bytes.subarray(from, from + n));
    // Read whole: its memory goes now, not at the next collection (a copy between stores would peak far higher).
    this.#consumed(at, n, true);
    return n;
  }

  /**
   * The verified bytes from `position` to the end of the piece holding them
   * (at most `max`), handed over as they are held instead of copied: the
   * taker owns them (they are left to the collector). Empty at the end.
   */
  async takeAt(position: number, max: number): Promise<Uint8Array> {
    if (!(await this.#verifiedPast(position))) return new Uint8Array(0);
    const at = this.#find(position);
    const held = this.#ready[at]!;
    const from = position - held.start;
    const bytes = held.bytes.subarray(from, from + Math.min(max, held.bytes.length - from));
    this.#consumed(at, bytes.length, false);
    return bytes;
  }

  /** Waits until the byte at `position` is verified; false at the end. */
  async #verifiedPast(position: number): Promise<boolean> {
    for (;;) {
      if (this.#failure) throw this.#failure.err;
      if (position >= this.size) return false;
      if (position < this.#verifiedTo) return true;
      // A starving reader lets a held-back piece that extends the prefix in: tell the writers.
      this.#waitingFor.push(position);
      this.#wakeWriters();
      const starving = position === this.#verifiedTo && this.#starvedSince === undefined;
      if (starving) this.#starvedSince = performance.now();
      await new Promise<void>((go) => this.#readers.push(go));
      if (starving && this.#starvedSince !== undefined) {
        this.#starvedMs += performance.now() - this.#starvedSince;
        this.#starvedSince = undefined;
      }
      this.#waitingFor.splice(this.#waitingFor.indexOf(position), 1);
    }
  }

  /** `n` more bytes of the ready piece at `at` were read; a piece read whole is dropped (its memory freed now when `release`). */
  #consumed(at: number, n: number, release: boolean): void {
    const held = this.#ready[at]!;
    held.read += n;
    if (held.read < held.bytes.length) return;
    this.#ready.splice(at, 1);
    this.#held -= held.bytes.length;
    if (release) releaseChunks([held.bytes]);
    this.#pace(held.bytes.length);
    this.#wake();
  }

  /** Feeds the check every piece that now continues the verified prefix; finishes it at the end. */
  #verify(): void {
    for (let next = this.#pending.get(this.#verifiedTo); next; next = this.#pending.get(this.#verifiedTo)) {
      this.#pending.delete(this.#verifiedTo);
      for (const bytes of next) {
        this.check?.update(bytes);
        this.#ready.push({ start: this.#verifiedTo, bytes, read: 0 });
        this.#verifiedTo += bytes.length;
      }
    }
    if (this.#verifiedTo >= this.size) {
      try {
        this.check?.finish();
      } catch (err) {
        this.fail(err);
      }
    }
  }

  /** The ready piece holding `position` (binary search over starts). */
  #find(position: number): number {
    let lo = 0;
    let hi = this.#ready.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.#ready[mid]!.start <= position) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  #wake(): void {
    const readers = this.#readers;
    this.#readers = [];
    for (const go of readers) go();
    this.#wakeWriters();
  }

  #wakeWriters(): void {
    const writers = this.#writers;
    this.#writers = [];
    for (const go of writers) go();
  }
}
