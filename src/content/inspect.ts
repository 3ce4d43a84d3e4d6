/**
 * inspect_object's engine: what an object (or an archive's member) holds,
 * from the fewest bytes that tell. The first 256 KiB decide the format (magic
 * bytes first, the name's extension next); Parquet and zip are then read by
 * ranges from their footers and directories, tar and gzip'd files as far as
 * their streams need, text as the sample shows it. Reads go through the
 * source (source.ts: an object's are ranged GETs through the storage layer).
 */

import { createGunzip } from "node:zlib";
import { ActionableError, isAbortError } from "../runtime/errors.ts";
import { type ImageFacts, imageFacts } from "./formats/image.ts";
import { type ParquetSummary, rangedFile, summarizeParquet } from "./formats/parquet.ts";
import {
  FIRST_ROWS,
  type JsonSummary,
  summarizeDelimited,
  summarizeJson,
  summarizeJsonLines,
  type TableSummary,
} from "./formats/table.ts";
import { isTarHeader, type TarEntry, walkTar } from "./formats/tar.ts";
import { type ZipEntry, zipEntries } from "./formats/zip.ts";
import { type Source, streamOf } from "./source.ts";
import { gunzipped, isGzip } from "./windows.ts";

export const SNIFF_BYTES = 256 * 1024;
/** A JSON document up to this size is parsed whole. */
const JSON_WHOLE_BYTES = 8 * 1024 * 1024;
/** Entries listed at most (the total is still counted where the archive says it). */
export const MAX_ENTRIES = 1000;
/** A tar stream is walked this far at most. */
const TAR_WALK_BYTES = 4 * 1024 * 1024 * 1024;

export type Summary =
  | TableSummary
  | JsonSummary
  | ParquetSummary
  | { format: "zip"; entries: Omit<ZipEntry, "offset" | "crc32">[]; total_entries: number; listed_all: boolean }
  | { format: "tar"; entries: Omit<TarEntry, "offset">[]; total_entries: number | null; listed_all: boolean }
  | ({ format: "image" } & Omit<ImageFacts, "format"> & { image_format: ImageFacts["format"] })
  | { format: "text"; lines: string[]; lines_in_sample: number }
  | { format: "binary"; detected_type: string | null };

const MAGIC: [string, number[]][] = [
  ["application/pdf", [0x25, 0x50, 0x44, 0x46]],
  ["application/x-7z-compressed", [0x37, 0x7a, 0xbc, 0xaf]],
  ["application/zstd", [0x28, 0xb5, 0x2f, 0xfd]],
  ["application/x-bzip2", [0x42, 0x5a, 0x68]],
  ["application/x-xz", [0xfd, 0x37, 0x7a, 0x58, 0x5a]],
  ["application/x-sqlite3", [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65]],
  ["application/x-executable", [0x7f, 0x45, 0x4c, 0x46]],
];
const startsWith = (b: Uint8Array, m: number[]) => m.every((x, i) => b[i] === x);
const ext = (name: string) =>
  name
    .toLowerCase()
    .replace(/\.(gz|gzip)$/, "")
    .split(".")
    .pop() ?? "";

/** What `src` holds; compression "gzip" when the summary is of its decompressed content. */
export async function inspectSource(src: Source): Promise<{ summary: Summary; compression: "gzip" | null }> {
  const head = await src.read(0, Math.min(SNIFF_BYTES, src.size));
  const whole = head.length >= src.size;
  const plain = (summary: Summary) => ({ summary, compression: null });
  if (src.size >= 12 && startsWith(head, [0x50, 0x41, 0x52, 0x31])) {
    if (src.prefix && src.prefix.length < src.size)
      return plain({ format: "binary", detected_type: "application/vnd.apache.parquet" });
    try {
      return plain(await summarizeParquet(rangedFile(src.size, src.read), FIRST_ROWS));
    } catch (err) {
      // A footer that does not parse (damaged, crafted, or larger than is read here): said as such, never a crash.
      if (err instanceof ActionableError || isAbortError(err)) throw err;
      throw new ActionableError({
        resource: src.name,
        code: "UnreadableObject",
        message: `It starts as Parquet, but its footer cannot be read: ${String((err as Error)?.message ?? err).slice(0, 200)}.`,
        hint: "the object may be damaged or not Parquet; query_objects reads Parquet files in its engine, get_object with a small max_content_size shows its first bytes.",
      });
    }
  }
  if (!src.prefix && (startsWith(head, [0x50, 0x4b, 0x03, 0x04]) || startsWith(head, [0x50, 0x4b, 0x05, 0x06]))) {
    const zip = await zipEntries(src.size, src.read);
    return plain({
      format: "zip",
      entries: zip.entries.slice(0, MAX_ENTRIES).map(({ offset: _o, crc32: _c, ...e }) => e),
      total_entries: zip.total,
      listed_all: zip.total <= MAX_ENTRIES && zip.listed_all,
    });
  }
  const rest = async function* () {
    yield head;
    if (!whole) yield* streamOf(src, head.length);
  };
  if (isGzip(head)) {
    const gunzip = createGunzip();
    const it = gunzipped(rest(), TAR_WALK_BYTES, gunzip)[Symbol.asyncIterator]();
    const sample: Uint8Array[] = [];
    let sampled = 0;
    let ended = true;
    for (;;) {
      const next = await it.next();
      if (next.done) break;
      sample.push(next.value);
      sampled += next.value.length;
      if (sampled >= SNIFF_BYTES) {
        ended = false;
        break;
      }
    }
    const inner = Buffer.concat(sample);
    if (isTarHeader(inner.subarray(0, 512))) {
      const more = (async function* () {
        yield inner;
        if (ended) return;
        for (;;) {
          const next = await it.next();
          if (next.done) return;
          yield next.value;
        }
      })();
      return { summary: await tarSummary(more), compression: "gzip" };
    }
    // Estimates scale the sample by the compressed bytes the inflater used for it (not what it was handed).
    const used = gunzip.bytesWritten;
    await it.return?.(undefined);
    return {
      summary: textSummary(
        src.name,
        inner,
        ended,
        ended ? inner.length : Math.round(inner.length * (src.size / Math.max(used, 1))),
      ),
      compression: "gzip",
    };
  }
  if (isTarHeader(head.subarray(0, 512))) return plain(await tarSummary(rest(), (offset) => streamOf(src, offset)));
  const image = imageFacts(head);
  if (image) return plain({ format: "image", image_format: image.format, width: image.width, height: image.height });
  if (head.subarray(0, 8192).includes(0))
    return plain({ format: "binary", detected_type: MAGIC.find(([, m]) => startsWith(head, m))?.[0] ?? null });
  if (["json", "geojson"].includes(ext(src.name)) && !whole && src.size <= JSON_WHOLE_BYTES && !src.prefix)
    return plain(textSummary(src.name, await src.read(0, src.size), true, src.size));
  return plain(textSummary(src.name, head, whole, src.size));
}

async function tarSummary(
  stream: AsyncIterable<Uint8Array>,
  reopen?: (offset: number) => AsyncIterable<Uint8Array>,
): Promise<Summary> {
  const entries: Omit<TarEntry, "offset">[] = [];
  let count = 0;
  // A tar has no directory: it is walked as it streams, until its end or the entry after the last one listed.
  const how = await walkTar(
    stream,
    ({ offset: _o, ...e }) => {
      count++;
      if (entries.length < MAX_ENTRIES) entries.push(e);
      return count > MAX_ENTRIES ? "stop" : "next";
    },
    undefined,
    reopen,
  );
  return {
    format: "tar",
    entries,
    total_entries: how === "end" ? count : null,
    listed_all: how === "end" && count <= MAX_ENTRIES,
  };
}

function textSummary(key: string, bytes: Uint8Array, whole: boolean, size: number): Summary {
  const text = new TextDecoder().decode(bytes);
  const kind = ext(key);
  const trimmed = text.trimStart();
  if (["json", "jsonl", "ndjson", "geojson"].includes(kind) || trimmed.startsWith("{") || trimmed.startsWith("[")) {
    if (whole && kind !== "jsonl" && kind !== "ndjson") {
      try {
        return summarizeJson(JSON.parse(text));
      } catch {}
    }
    const lines = summarizeJsonLines(text, whole, size);
    if (lines) return lines;
  }
  const hint = kind === "tsv" || kind === "tab" ? "\t" : undefined;
  if (["csv", "tsv", "tab", "psv"].includes(kind)) return summarizeDelimited(text, whole, size, hint);
  const table = summarizeDelimited(text, whole, size);
  const lines = text.split(/\r?\n/);
  // Delimited when most lines of the sample have the same number (2 or more) of fields.
  const widths = lines
    .slice(0, 50)
    .filter((l) => l)
    .map((l) => l.split(table.delimiter).length);
  if (table.columns.length >= 2 && widths.filter((w) => w === table.columns.length).length >= widths.length * 0.9)
    return table;
  return {
    format: "text",
    lines: lines.slice(0, 20).map((l) => (l.length > 500 ? `${l.slice(0, 500)}…` : l)),
    lines_in_sample: whole ? lines.length - (text.endsWith("\n") ? 1 : 0) : lines.length - 1,
  };
}
