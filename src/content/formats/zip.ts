/**
 * A zip archive's entries from its central directory, read by ranges: the
 * end record from the last 64 KiB (plus the zip64 end record when the
 * archive needs it), then the directory itself — never the members' bytes,
 * whatever the archive's size. One member is then read from its local header
 * on: stored or deflated, its CRC-32 checked over the whole member.
 */
import { inflateRawSync } from "node:zlib";

/** Reads `length` bytes at `offset` (one ranged GET). */
export type RangeReader = (offset: number, length: number) => Promise<Uint8Array>;

export interface ZipEntry {
  name: string;
  method: "stored" | "deflate" | string;
  compressed_size: number;
  size: number;
  modified: string | null;
  crc32: number;
  /** Where its local header starts. */
  offset: number;
  is_dir: boolean;
}

export class ZipError extends Error {}

const EOCD = 0x06054b50;
const EOCD64 = 0x06064b50;
const EOCD64_LOCATOR = 0x07064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const TAIL = 64 * 1024 + 22;
/** A directory larger than this is read only this far (its entries listed up to there). */
export const MAX_DIRECTORY_BYTES = 8 * 1024 * 1024;

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
const u64 = (v: DataView, at: number) => Number(v.getBigUint64(at, true));

export async function zipEntries(
  size: number,
  read: RangeReader,
): Promise<{ entries: ZipEntry[]; total: number; listed_all: boolean; comment: string }> {
  const tailStart = Math.max(0, size - TAIL);
  const tail = await read(tailStart, size - tailStart);
  const tv = view(tail);
  let at = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tv.getUint32(i, true) === EOCD) {
      at = i;
      break;
    }
  }
  if (at < 0) throw new ZipError("no end of central directory record: not a zip archive, or a truncated one");
  let total = tv.getUint16(at + 10, true);
  let dirSize = tv.getUint32(at + 12, true);
  let dirOffset = tv.getUint32(at + 16, true);
  const comment = new TextDecoder().decode(tail.subarray(at + 22, at + 22 + tv.getUint16(at + 20, true)));
  // zip64: the real figures are in the zip64 end record the locator (just before the end record) points at.
  if (total === 0xffff || dirSize === 0xffffffff || dirOffset === 0xffffffff) {
    const loc = at - 20;
    if (loc < 0 || tv.getUint32(loc, true) !== EOCD64_LOCATOR)
      throw new ZipError("a zip64 archive without its zip64 end record locator");
    const recordAt = u64(tv, loc + 8);
    const record =
      recordAt >= tailStart ? tail.subarray(recordAt - tailStart, recordAt - tailStart + 56) : await read(recordAt, 56);
    const rv = view(record);
    if (rv.getUint32(0, true) !== EOCD64) throw new ZipError("the zip64 end record is not where its locator says");
    total = u64(rv, 32);
    dirSize = u64(rv, 40);
    dirOffset = u64(rv, 48);
  }
  const want = Math.min(dirSize, MAX_DIRECTORY_BYTES);
  const dir =
    dirOffset >= tailStart && dirOffset + want <= size
      ? tail.subarray(dirOffset - tailStart, dirOffset - tailStart + want)
      : await read(dirOffset, want);
  const entries = parseDirectory(dir);
  return { entries, total, listed_all: entries.length >= total, comment };
}

function parseDirectory(dir: Uint8Array): ZipEntry[] {
  const v = view(dir);
  const entries: ZipEntry[] = [];
  const decoder = new TextDecoder();
  let p = 0;
  while (p + 46 <= dir.length && v.getUint32(p, true) === CENTRAL) {
    const flags = v.getUint16(p + 8, true);
    const methodCode = v.getUint16(p + 10, true);
    const time = v.getUint16(p + 12, true);
    const date = v.getUint16(p + 14, true);
    const crc32 = v.getUint32(p + 16, true);
    let compressed = v.getUint32(p + 20, true);
    let size = v.getUint32(p + 24, true);
    const nameLen = v.getUint16(p + 28, true);
    const extraLen = v.getUint16(p + 30, true);
    const commentLen = v.getUint16(p + 32, true);
    let offset = v.getUint32(p + 42, true);
    if (p + 46 + nameLen + extraLen > dir.length) break;
    const nameBytes = dir.subarray(p + 46, p + 46 + nameLen);
    // Names are CP437 unless flagged UTF-8; most tools write UTF-8 either way.
    const name = flags & 0x800 ? decoder.decode(nameBytes) : decoder.decode(nameBytes);
    // zip64 extra field: the 0xffffffff figures, in order.
    const extra = dir.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen);
    const ev = view(extra);
    for (let e = 0; e + 4 <= extra.length; ) {
      const id = ev.getUint16(e, true);
      const len = ev.getUint16(e + 2, true);
      if (id === 0x0001) {
        let q = e + 4;
        if (size === 0xffffffff && q + 8 <= e + 4 + len) (size = u64(ev, q)), (q += 8);
        if (compressed === 0xffffffff && q + 8 <= e + 4 + len) (compressed = u64(ev, q)), (q += 8);
        if (offset === 0xffffffff && q + 8 <= e + 4 + len) offset = u64(ev, q);
      }
      e += 4 + len;
    }
    entries.push({
      name,
      method: methodCode === 0 ? "stored" : methodCode === 8 ? "deflate" : `method ${methodCode}`,
      compressed_size: compressed,
      size,
      modified: dosTime(date, time),
      crc32,
      offset,
      is_dir: name.endsWith("/"),
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

function dosTime(date: number, time: number): string | null {
  if (date === 0) return null;
  const y = 1980 + (date >> 9);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${y}-${pad((date >> 5) & 15)}-${pad(date & 31)}T${pad(time >> 11)}:${pad((time >> 5) & 63)}:${pad((time & 31) * 2)}`;
}

/** Where a member's data starts and how many bytes it takes (from its local header, whose name and extra lengths may differ from the directory's). */
export async function memberData(entry: ZipEntry, read: RangeReader): Promise<{ start: number; length: number }> {
  const header = await read(entry.offset, 30);
  const hv = view(header);
  if (header.length < 30 || hv.getUint32(0, true) !== LOCAL)
    throw new ZipError(`no local header for ${entry.name} where the directory says`);
  return { start: entry.offset + 30 + hv.getUint16(26, true) + hv.getUint16(28, true), length: entry.compressed_size };
}

/** A member's bytes, uncompressed and checked against its CRC-32 (an archive damaged or altered fails here). */
export function memberBytes(entry: ZipEntry, data: Uint8Array): Uint8Array {
  let out: Uint8Array;
  if (entry.method === "stored") out = data;
  else if (entry.method === "deflate") {
    try {
      out = inflateRawSync(data, { maxOutputLength: Math.max(entry.size, 1) });
    } catch (err) {
      throw new ZipError(`${entry.name} does not inflate: ${(err as Error).message}`);
    }
  } else
    throw new ZipError(`${entry.name} is compressed with ${entry.method}: only stored and deflate members can be read`);
  if (out.length !== entry.size)
    throw new ZipError(`${entry.name} has ${out.length} bytes, its directory entry says ${entry.size}`);
  if (Bun.hash.crc32(out) >>> 0 !== entry.crc32 >>> 0)
    throw new ZipError(`${entry.name} fails its CRC-32 check: the archive is damaged`);
  return out;
}
