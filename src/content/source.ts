/**
 * What inspect_object and archive members read from: bytes with a size and
 * a ranged reader. An object is one (every range a GET through the storage
 * layer, pinned to the version the first answer named, each one counted);
 * a zip member stored uncompressed, or a member of an uncompressed tar, is a
 * range of its archive; a compressed member is its first bytes, inflated.
 */
import { createInflateRaw } from "node:zlib";
import type { ObjectAddress, ObjectMeta, Storage } from "../storage/index.ts";
import { type TarEntry, walkTar } from "./formats/tar.ts";
import { memberData, type RangeReader, type ZipEntry, ZipError, zipEntries } from "./formats/zip.ts";
import { gunzipped, isGzip, pulled } from "./windows.ts";

export interface Source {
  /** The key, or archive key!member: its extension says what it may be. */
  name: string;
  size: number;
  read: RangeReader;
  /** Set for bytes held in memory: only these are known (a compressed member's first bytes). */
  prefix?: Uint8Array;
}

export interface ObjectSource extends Source {
  meta: ObjectMeta;
  /** Reads so far: GETs and bytes. */
  counts: { requests: number; bytes: number };
  /** Whether `bytes`, a read's answer, is its own buffer (fetched for it), which the reader may free once used; not a view of the bytes the source keeps. */
  owned(bytes: Uint8Array): boolean;
}

/** The object, with its first `sniff` bytes read (one GET). */
export async function objectSource(
  storage: Storage,
  addr: ObjectAddress,
  signal: AbortSignal,
  sniff: number,
): Promise<ObjectSource> {
  const first = await storage.readObjectHead(addr, sniff, signal);
  const counts = { requests: 1, bytes: first.bytes.length };
  const pinned = first.meta.version_id && !addr.versionId ? { ...addr, versionId: first.meta.version_id } : addr;
  const head = first.bytes;
  return {
    name: addr.key,
    size: first.meta.size,
    meta: first.meta,
    counts,
    owned: (bytes) => bytes.buffer !== head.buffer,
    read: async (offset, length) => {
      length = Math.max(0, Math.min(length, first.meta.size - offset));
      if (offset + length <= head.length) return head.subarray(offset, offset + length);
      counts.requests++;
      // Pinned to the ETag of the first bytes: a replaced object fails rather than mixing two objects' bytes.
      const got = await storage.readObjectHead(pinned, length, signal, offset, first.meta.etag ?? undefined);
      counts.bytes += got.bytes.length;
      return got.bytes;
    },
  };
}

/** The source's bytes in order from `from`, `window` at a time. */
export async function* streamOf(src: Source, from = 0, window = 1024 * 1024): AsyncGenerator<Uint8Array> {
  for (let at = from; at < src.size; ) {
    const bytes = await src.read(at, Math.min(window, src.size - at));
    if (bytes.length === 0) return;
    at += bytes.length;
    yield bytes;
  }
}

export class MemberNotFound extends Error {}

/**
 * A zip or tar (or tar.gz) member as a source; a compressed one as `keep` of its bytes from `from` (inflated from its
 * start: a stream cannot be entered in the middle).
 */
export async function memberSource(
  archive: Source,
  member: string,
  keep: number,
  from = 0,
): Promise<Source & { entry: ZipEntry | TarEntry }> {
  const head = await archive.read(0, 4);
  const name = `${archive.name}!${member}`;
  if (head[0] === 0x50 && head[1] === 0x4b) {
    const { entries } = await zipEntries(archive.size, archive.read);
    const entry = entries.find((e) => e.name === member);
    if (!entry) throw new MemberNotFound(`no member named "${member}" in the zip`);
    const data = await memberData(entry, archive.read);
    if (entry.method === "stored")
      return {
        name,
        size: entry.size,
        entry,
        read: (offset, length) => archive.read(data.start + offset, Math.min(length, entry.size - offset)),
      };
    if (entry.method !== "deflate")
      throw new ZipError(`${member} is compressed with ${entry.method}: only stored and deflate members can be read`);
    const held = await inflatedWindow(
      streamOf({ ...archive, size: data.start + data.length }, data.start),
      from,
      keep,
      entry,
    );
    return inMemory(name, entry.size, held, from, entry);
  }
  const gz = isGzip(head);
  const stream = gz ? gunzipped(streamOf(archive), Number.MAX_SAFE_INTEGER) : streamOf(archive);
  let found: TarEntry | undefined;
  const parts: Uint8Array[] = [];
  let seen = 0;
  await walkTar(
    stream,
    (e) => (e.name === member || e.name === `./${member}` ? ((found = e), gz ? "data" : "stop") : "next"),
    (bytes) => {
      // This piece's place in the member: keep what falls in [from, from + keep).
      const start = seen;
      seen += bytes.length;
      const lo = Math.max(from - start, 0);
      const hi = Math.min(from + keep - start, bytes.length);
      if (hi > lo) parts.push(bytes.subarray(lo, hi));
      // Held all that is kept: the rest of the member is not inflated.
      return seen < from + keep;
    },
    gz ? undefined : (offset) => streamOf(archive, offset),
  );
  if (!found) throw new MemberNotFound(`no member named "${member}" in the tar`);
  const entry = found;
  // An uncompressed tar's member is a range of the archive.
  if (!gz)
    return {
      name,
      size: entry.size,
      entry,
      read: (offset, length) => archive.read(entry.offset + offset, Math.min(length, entry.size - offset)),
    };
  return inMemory(name, entry.size, Buffer.concat(parts), from, entry);
}

function inMemory<E>(name: string, size: number, held: Uint8Array, from: number, entry: E): Source & { entry: E } {
  return {
    name,
    size,
    entry,
    ...(from === 0 ? { prefix: held } : {}),
    read: async (offset, length) => {
      const end = Math.min(offset + length, size);
      if (offset < from || end > from + held.length)
        throw new ZipError(`only bytes ${from}-${from + held.length - 1} of ${name} are read here`);
      return held.subarray(offset - from, end - from);
    },
  };
}

/**
 * `keep` of the bytes a raw deflate stream inflates to, from byte `from` on (those before are inflated and dropped);
 * ZipError once it inflates past the size its entry declares.
 */
async function inflatedWindow(
  compressed: AsyncIterable<Uint8Array>,
  from: number,
  keep: number,
  entry: ZipEntry,
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let seen = 0;
  for await (const c of withinDeclared(pulled(createInflateRaw(), compressed), entry)) {
    const start = seen;
    seen += c.length;
    const lo = Math.max(from - start, 0);
    const hi = Math.min(from + keep - start, c.length);
    if (hi > lo) parts.push(c.subarray(lo, hi));
    if (seen >= from + keep) break;
  }
  return Buffer.concat(parts);
}

/** A zip member's bytes, ended with ZipError as soon as they pass the size its entry declares (a bomb stops there). */
async function* withinDeclared(chunks: AsyncIterable<Uint8Array>, entry: ZipEntry): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const c of chunks) {
    total += c.length;
    if (total > entry.size)
      throw new ZipError(
        `${entry.name} inflates past the ${entry.size} bytes its entry declares: the archive is damaged or crafted`,
      );
    yield c;
  }
}

/**
 * Every byte of a member, in order, handed to `take` (awaited: a slow taker slows the reading), for a download. A zip
 * member's bytes are stored or inflated as they stream; a tar member's are picked out of the archive's stream.
 */
export async function eachMemberChunk(
  archive: Source,
  member: string,
  take: (bytes: Uint8Array) => Promise<void>,
): Promise<ZipEntry | TarEntry> {
  const head = await archive.read(0, 4);
  if (head[0] === 0x50 && head[1] === 0x4b) {
    const { entries } = await zipEntries(archive.size, archive.read);
    const entry = entries.find((e) => e.name === member);
    if (!entry) throw new MemberNotFound(`no member named "${member}" in the zip`);
    const data = await memberData(entry, archive.read);
    const stored = streamOf({ ...archive, size: data.start + data.length }, data.start);
    if (entry.method === "stored") for await (const c of withinDeclared(stored, entry)) await take(c);
    else if (entry.method === "deflate")
      for await (const c of withinDeclared(pulled(createInflateRaw(), stored), entry)) await take(c);
    else
      throw new ZipError(`${member} is compressed with ${entry.method}: only stored and deflate members can be read`);
    return entry;
  }
  const gz = isGzip(head);
  let found: TarEntry | undefined;
  await walkTar(
    gz ? gunzipped(streamOf(archive), Number.MAX_SAFE_INTEGER) : streamOf(archive),
    (e) => (e.name === member || e.name === `./${member}` ? ((found = e), "data") : "next"),
    take,
    gz ? undefined : (offset) => streamOf(archive, offset),
  );
  if (!found) throw new MemberNotFound(`no member named "${member}" in the tar`);
  return found;
}
