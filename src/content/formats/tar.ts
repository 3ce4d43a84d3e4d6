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
  let buf: Uint8Array = new Uint8Array(0);
  let pos = 0;
  let skip = 0;
  let giving = 0;
  let longName: string | undefined;
  let pax: Record<string, string> = {};
  let pending: "longname" | "pax" | undefined;
  let meta: Uint8Array = new Uint8Array(0);
  let it = stream[Symbol.asyncIterator]();
  const more = async () => {
    const next = await it.next();
    if (next.done) return false;
    buf = buf.length ? concat(buf, next.value) : next.value;
    return true;
  };
  try {
    for (;;) {
      // A large member skipped: the stream starts again past it.
      if (reopen && giving === 0 && skip - buf.length > SEEK_BYTES) {
        await it.return?.();
        pos += skip;
        skip = 0;
        buf = new Uint8Array(0);
        it = reopen(pos)[Symbol.asyncIterator]();
      }
      // Data being skipped or handed over.
      while (skip > 0 || giving > 0) {
        if (buf.length === 0 && !(await more())) throw new TarError("the archive ends inside an entry");
        const n = Math.min(buf.length, skip + giving);
        const give = Math.min(n, giving);
        if (give > 0) {
          const piece = buf.subarray(0, give);
          if (pending) meta = concat(meta, piece);
          else await onData?.(piece);
          giving -= give;
        }
        skip -= n - give;
        buf = buf.subarray(n);
        pos += n;
        if (giving === 0 && pending) {
          if (pending === "longname") longName = text(meta);
          else pax = { ...pax, ...parsePax(decoder.decode(meta)) };
          pending = undefined;
          meta = new Uint8Array(0);
        }
      }
      while (buf.length < BLOCK) if (!(await more())) return "end";
      const header = buf.subarray(0, BLOCK);
      buf = buf.subarray(BLOCK);
      pos += BLOCK;
      if (header.every((b) => b === 0)) return "end";
      if (!isTarHeader(header))
        throw new TarError(`no tar header at byte ${pos - BLOCK}: not a tar archive, or a damaged one`);
      const flag = String.fromCharCode(header[156]!);
      let size = octal(header.subarray(124, 136));
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      if (flag === "L" || flag === "x" || flag === "g") {
        pending = flag === "L" ? "longname" : "pax";
        if (flag === "g") pending = "pax";
        giving = size;
        skip = padded - size;
        continue;
      }
      const prefix = header[345] ? text(header.subarray(345, 500)) : "";
      const name =
        pax.path ?? longName ?? (prefix ? `${prefix}/${text(header.subarray(0, 100))}` : text(header.subarray(0, 100)));
      if (pax.size) size = Number(pax.size);
      const mtime = pax.mtime ? Number(pax.mtime) : octal(header.subarray(136, 148));
      longName = undefined;
      pax = {};
      const type =
        flag === "5"
          ? "directory"
          : flag === "2"
            ? "symlink"
            : flag === "1"
              ? "hardlink"
              : flag === "0" || flag === "\0" || flag === "7"
                ? "file"
                : "other";
      const entry: TarEntry = {
        name,
        size,
        type,
        modified: mtime ? new Date(mtime * 1000).toISOString() : null,
        offset: pos,
      };
      const what = onEntry(entry);
      if (what === "stop") return "stopped";
      const total = Math.ceil(size / BLOCK) * BLOCK;
      giving = what === "data" ? size : 0;
      skip = total - giving;
      if (what === "data") {
        // Hand over the member, then stop.
        while (giving > 0) {
          if (buf.length === 0 && !(await more())) throw new TarError(`the archive ends inside ${name}`);
          const n = Math.min(buf.length, giving);
          // Enough of the member (a tar.gz member's first bytes): nothing more is inflated.
          if ((await onData?.(buf.subarray(0, n))) === false) return "stopped";
          buf = buf.subarray(n);
          giving -= n;
        }
        return "stopped";
      }
    }
  } finally {
    await it.return?.();
  }
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
