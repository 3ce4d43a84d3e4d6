/**
 * A tar archive's entries, read as the bytes stream by (ustar, GNU long
 * names and PAX path/size records), and one member's bytes picked out of the
 * same stream. Nothing is written anywhere.
 */
export interface TarEntry {
  name: string;
  size: number;
  type: "file" | "directory" | "symlink" | "hardlink" | "other";
  modified: string | null;
  /** Where its data starts in the (uncompressed) stream. */
  offset: number;
}

export class TarError extends Error {}

const BLOCK = 512;
const decoder = new TextDecoder();
const text = (b: Uint8Array) => decoder.decode(b.subarray(0, b.indexOf(0) < 0 ? b.length : b.indexOf(0)));
const octal = (b: Uint8Array) => {
  // GNU base-256 for sizes past 8 GiB.
  if (b[0]! & 0x80) return b.subarray(1).reduce((n, x) => n * 256 + x, 0);
  const s = text(b).trim();
  return s ? parseInt(s, 8) : 0;
};

/** Whether a 512-byte block is a tar header (its checksum holds). */
export function isTarHeader(block: Uint8Array): boolean {
  if (block.length < BLOCK) return false;
  const stored = octal(block.subarray(148, 156));
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : block[i]!;
  return sum === stored && sum > 8 * 32;
}

/** Skipping more than this of a member's bytes reopens the stream past them, where the walk may (`reopen`). */
const SEEK_BYTES = 1024 * 1024;

/**
 * Walks the archive: `onEntry` for each entry (return "stop" to end the walk, "data" to be handed its bytes through
 * `onData`, which returns false once it has what it wants). Reads the stream only as far as needed; with `reopen` (an
 * uncompressed archive read by ranges), a large member's bytes are jumped over instead of read past.
 */
export async function walkTar(
  stream: AsyncIterable<Uint8Array>,
  onEntry: (e: TarEntry) => "next" | "data" | "stop",
  onData?: (bytes: Uint8Array) => void | boolean | Promise<void | boolean>,
  reopen?: (offset: number) => AsyncIterable<Uint8Array>,
): Promise<"end" | "stopped"> {
  const walk = new TarWalk(stream, onData, reopen);
  try {
    return await walk.run(onEntry);
  } finally {
    await walk.close();
  }
}

/** One walk's place in the stream: the bytes at hand, what is still to skip or hand over, and the metadata records read for the next entry. */
class TarWalk {
  #buf: Uint8Array = new Uint8Array(0);
  /** Where #buf starts in the (uncompressed) stream. */
  #pos = 0;
  #skip = 0;
  #giving = 0;
  #longName: string | undefined;
  #pax: Record<string, string> = {};
  /** A GNU long name or a PAX record being read (its bytes gathered in #meta), not a member's data. */
  #pending: "longname" | "pax" | undefined;
  #meta: Uint8Array = new Uint8Array(0);
  #it: AsyncIterator<Uint8Array>;

  constructor(
    stream: AsyncIterable<Uint8Array>,
    readonly onData: ((bytes: Uint8Array) => void | boolean | Promise<void | boolean>) | undefined,
    readonly reopen: ((offset: number) => AsyncIterable<Uint8Array>) | undefined,
  ) {
    this.#it = stream[Symbol.asyncIterator]();
  }

  async run(onEntry: (e: TarEntry) => "next" | "data" | "stop"): Promise<"end" | "stopped"> {
    for (;;) {
      await this.#jumpPastLargeMember();
      await this.#passData();
      const header = await this.#nextHeader();
      if (!header) return "end";
      const flag = String.fromCharCode(header[156]!);
      const size = octal(header.subarray(124, 136));
      if (flag === "L" || flag === "x" || flag === "g") {
        this.#pending = flag === "L" ? "longname" : "pax";
        this.#giving = size;
        this.#skip = Math.ceil(size / BLOCK) * BLOCK - size;
        continue;
      }
      const entry = this.#entryOf(header, flag, size);
      const what = onEntry(entry);
      if (what === "stop") return "stopped";
      if (what === "data") {
        await this.#handOver(entry);
        return "stopped";
      }
      this.#skip = Math.ceil(entry.size / BLOCK) * BLOCK;
    }
  }

  async close(): Promise<void> {
    await this.#it.return?.();
  }

  async #more(): Promise<boolean> {
    const next = await this.#it.next();
    if (next.done) return false;
    this.#buf = this.#buf.length ? concat(this.#buf, next.value) : next.value;
    return true;
  }

  /** A large member skipped: the stream starts again past it. */
  async #jumpPastLargeMember(): Promise<void> {
    if (!this.reopen || this.#giving > 0 || this.#skip - this.#buf.length <= SEEK_BYTES) return;
    await this.#it.return?.();
    this.#pos += this.#skip;
    this.#skip = 0;
    this.#buf = new Uint8Array(0);
    this.#it = this.reopen(this.#pos)[Symbol.asyncIterator]();
  }

  /** Data being skipped, or a metadata record's bytes gathered (then read). */
  async #passData(): Promise<void> {
    while (this.#skip > 0 || this.#giving > 0) {
      if (this.#buf.length === 0 && !(await this.#more())) throw new TarError("the archive ends inside an entry");
      const n = Math.min(this.#buf.length, this.#skip + this.#giving);
      const give = Math.min(n, this.#giving);
      if (give > 0) {
        const piece = this.#buf.subarray(0, give);
        if (this.#pending) this.#meta = concat(this.#meta, piece);
        else await this.onData?.(piece);
        this.#giving -= give;
      }
      this.#skip -= n - give;
      this.#buf = this.#buf.subarray(n);
      this.#pos += n;
      if (this.#giving === 0 && this.#pending) {
        if (this.#pending === "longname") this.#longName = text(this.#meta);
        else this.#pax = { ...this.#pax, ...parsePax(decoder.decode(this.#meta)) };
        this.#pending = undefined;
        this.#meta = new Uint8Array(0);
      }
    }
  }

  /** The next header block; undefined at the end (the stream's, or the zero block). */
  async #nextHeader(): Promise<Uint8Array | undefined> {
    while (this.#buf.length < BLOCK) if (!(await this.#more())) return undefined;
    const header = this.#buf.subarray(0, BLOCK);
    this.#buf = this.#buf.subarray(BLOCK);
    this.#pos += BLOCK;
    if (header.every((b) => b === 0)) return undefined;
    if (!isTarHeader(header))
      throw new TarError(`no tar header at byte ${this.#pos - BLOCK}: not a tar archive, or a damaged one`);
    return header;
  }

  /** The entry a header names, with the long name or PAX records read before it (then forgotten). */
  #entryOf(header: Uint8Array, flag: string, headerSize: number): TarEntry {
    const pax = this.#pax;
    const prefix = header[345] ? text(header.subarray(345, 500)) : "";
    const name =
      pax.path ??
      this.#longName ??
      (prefix ? `${prefix}/${text(header.subarray(0, 100))}` : text(header.subarray(0, 100)));
    const size = pax.size ? Number(pax.size) : headerSize;
    const mtime = pax.mtime ? Number(pax.mtime) : octal(header.subarray(136, 148));
    this.#longName = undefined;
    this.#pax = {};
    return {
      name,
      size,
      type: typeOf(flag),
      modified: mtime ? new Date(mtime * 1000).toISOString() : null,
      offset: this.#pos,
    };
  }

  /** Hands over the member's bytes until it ends or `onData` has enough (a tar.gz member's first bytes: nothing more is inflated). */
  async #handOver(entry: TarEntry): Promise<void> {
    let giving = entry.size;
    while (giving > 0) {
      if (this.#buf.length === 0 && !(await this.#more())) throw new TarError(`the archive ends inside ${entry.name}`);
      const n = Math.min(this.#buf.length, giving);
      if ((await this.onData?.(this.#buf.subarray(0, n))) === false) return;
      this.#buf = this.#buf.subarray(n);
      giving -= n;
    }
  }
}

function typeOf(flag: string): TarEntry["type"] {
  if (flag === "5") return "directory";
  if (flag === "2") return "symlink";
  if (flag === "1") return "hardlink";
  return flag === "0" || flag === "\0" || flag === "7" ? "file" : "other";
}

function parsePax(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of s.split("\n")) {
    const m = /^\d+ ([^=]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
