/**
 * Keeps a big transfer's memory flat. JavaScriptCore lets its heap grow with
 * the allocation rate before it collects, so without help a larger object
 * peaks higher. A full collection after every `everyBytes` moved holds the
 * peak level whatever the size; each costs a pass over the whole heap, so it
 * must stay rare. Peaks per transfer shape: `npm run bench` (docs/performance.md).
 */
const EVERY_BYTES = 64 * 1024 * 1024;
/** Resident size above which a bulk job collects at every fifth look (itemPacer): well above an idle server's. */
const ITEM_FLOOR = 110 * 1024 * 1024;
/** Resident growth since the last collection that makes a bulk job collect. */
const ITEM_GROWTH = 8 * 1024 * 1024;

export function memoryPacer(everyBytes = EVERY_BYTES): (bytes: number) => void {
  const gc = (globalThis as { Bun?: { gc(sync: boolean): void } }).Bun?.gc;
  let moved = 0;
  return (bytes) => {
    moved += bytes;
    if (moved < everyBytes || !gc) return;
    moved = 0;
    gc(true);
  };
}

/** What a pacer reads and does: the resident size, and a full collection (none where the runtime has none). */
export interface PacerMemory {
  rss(): number;
  collect: ((sync: boolean) => void) | undefined;
}
const processMemory: PacerMemory = {
  rss: () => process.memoryUsage.rss(),
  collect: (globalThis as { Bun?: { gc(sync: boolean): void } }).Bun?.gc,
};

/** The last collection any item pacer made: the pacers of one job (its listing's, its items') share what it freed. */
const lastCollection = { count: 0, settled: 0 };

/**
 * The same for work that moves few bytes but makes many requests (a bulk job
 * of small objects, a listing of millions of keys): the SDK's request and XML
 * garbage grows the server until JavaScriptCore gets round to it. Every
 * `everyItems` items this looks at the resident size and collects (a pass over
 * the whole heap) when it grew `growth` since the last collection, or, once
 * above `floor`, at every fifth look. Collecting after every page, or at every
 * look above the floor, costs a large share of a scan's or a no-op sync's CPU
 * (the resident size does not shrink after one): BENCH_ONLY=bulk holds both.
 * Pacers share their collections (a job's listing and its items would
 * otherwise each collect for the same growth).
 */
export function itemPacer(
  everyItems: number,
  floor = ITEM_FLOOR,
  growth = ITEM_GROWTH,
  memory: PacerMemory = processMemory,
): () => void {
  const gc = memory.collect;
  let items = 0;
  let looks = 0;
  let settled = memory.rss();
  let seen = lastCollection.count;
  return () => {
    if (++items < everyItems || !gc) return;
    items = 0;
    // Another pacer collected since (a job's listing, its items): measure from there, and count the looks afresh.
    if (seen !== lastCollection.count) {
      seen = lastCollection.count;
      settled = lastCollection.settled;
      looks = 0;
    }
    const rss = memory.rss();
    if (rss - settled < growth && (rss < floor || ++looks < 5)) return;
    looks = 0;
    gc(true);
    settled = memory.rss();
    lastCollection.count = ++seen;
    lastCollection.settled = settled;
  };
}

/**
 * Frees the memory of chunks nobody will read again (a download's network
 * chunks once written) now, instead of at the next collection: detaching an
 * ArrayBuffer releases its bytes at once, so downloads need a full collection
 * only rarely (the download shapes of `npm run bench`). A chunk that shares its buffer (a
 * slice of a pool) or cannot be detached is left to the collector.
 */
export function releaseChunks(chunks: readonly Uint8Array[]): void {
  for (const chunk of chunks) {
    const buffer = chunk.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer };
    if (chunk.byteOffset !== 0 || chunk.byteLength !== buffer.byteLength || typeof buffer.transfer !== "function")
      continue;
    try {
      buffer.transfer(0);
    } catch {
      // A SharedArrayBuffer or a buffer the runtime will not let go: the collector frees it.
    }
  }
}

/**
 * A budget on the bytes that calls in flight may hold at once (a read's
 * buffer, its decoded text, its base64, its serialized answer). A call
 * reserves its share before it starts and waits while the budget is spent; a
 * share larger than the whole budget waits for all of it. Waiters are
 * admitted in arrival order among those that fit: a small share never waits
 * behind a large one that does not fit yet.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiting: { bytes: number; admit: () => void }[] = [];

  constructor(readonly limit: number) {}

  /** Bytes reserved now. */
  get inUse(): number {
    return this.used;
  }

  /** Waits until `bytes` fit, takes them, and returns the function that gives them back. */
  async reserve(bytes: number, signal?: AbortSignal): Promise<() => void> {
    const share = Math.min(bytes, this.limit);
    if (share <= 0) return () => {};
    if (this.used + share <= this.limit) {
      this.used += share;
    } else {
      signal?.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const entry = { bytes: share, admit: resolve };
        this.waiting.push(entry);
        signal?.addEventListener(
          "abort",
          () => {
            const i = this.waiting.indexOf(entry);
            if (i < 0) return; // already admitted
            this.waiting.splice(i, 1);
            reject(signal.reason);
            this.wake();
          },
          { once: true },
        );
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= share;
      this.wake();
    };
  }

  /** Admits, in arrival order, every waiter whose share fits (taking the share on their behalf). */
  private wake(): void {
    for (let i = 0; i < this.waiting.length; ) {
      const next = this.waiting[i]!;
      if (this.used + next.bytes > this.limit) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.used += next.bytes;
      next.admit();
    }
  }
}

/**
 * A reservation that outlives its call: a result is still in memory, then
 * serialized, then queued on stdout, after the handler returns. The server
 * hands the release over under the request id, and the transport settles it
 * once the answer is written out (or it is settled at the latest after
 * `maxHoldMs`, should no answer ever be sent).
 */
/** Where a server's calls hand their reservations: a transport's SendLeases, or a LeaseSlot. */
export type LeaseHolder = Pick<SendLeases, "hold">;

/**
 * The leases of whichever request a kept server (remote mode) is answering now: set when it takes a
 * request, cleared when it is done. A reservation handed over with no request set is released at once.
 */
export class LeaseSlot implements LeaseHolder {
  target: SendLeases | undefined;

  hold(id: string | number, release: () => void): void {
    if (this.target) this.target.hold(id, release);
    else release();
  }
}

export class SendLeases {
  private readonly held = new Map<string | number, () => void>();

  constructor(private readonly maxHoldMs = 60_000) {}

  hold(id: string | number, release: () => void): void {
    this.held.get(id)?.();
    const timer = setTimeout(() => this.sent(id), this.maxHoldMs);
    timer.unref?.();
    this.held.set(id, () => {
      clearTimeout(timer);
      release();
    });
  }

  /** Every answer of this transport has been written out (or never will be). */
  settleAll(): void {
    for (const id of [...this.held.keys()]) this.sent(id);
  }

  /** The answer to `id` has been written out. */
  sent(id: string | number): void {
    const release = this.held.get(id);
    this.held.delete(id);
    release?.();
  }
}
