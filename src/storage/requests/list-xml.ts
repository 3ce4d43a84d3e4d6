/**
 * A ListObjectsV2 answer read straight from its XML. The SDK's generic XML
 * parser and schema walk make every bulk scan CPU-bound and leave garbage per
 * key (BENCH_ONLY=bulk: storage_usage against rclone size). This reads only
 * the fields a page needs, with indexOf.
 * Anything it does not recognise (CDATA, another root, a missing field it
 * relies on) returns undefined, and the SDK parses the answer as before.
 */

/** The raw fields of one page: what ListObjectsV2Command's output would have held. */
export interface RawListPage {
  contents: {
    key: string;
    size: number;
    lastModified: string | null;
    etag: string | null;
    storageClass: string | null;
  }[];
  commonPrefixes: string[];
  isTruncated: boolean;
  nextContinuationToken: string | null;
}

/** An entity reference, or a bare "&" (no group matched): not well-formed XML. */
const AMP = /&(?:(amp|lt|gt|quot|apos);|#(\d+);|#x([0-9a-fA-F]+);)?/g;
const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** XML character data as text; undefined for anything XML does not allow (the SDK then decides). */
export function xmlText(raw: string): string | undefined {
  if (!raw.includes("&")) return raw;
  let bad = false;
  const text = raw.replace(AMP, (_m, name: string | undefined, dec: string | undefined, hex: string | undefined) => {
    if (name) return NAMED[name]!;
    const code = dec !== undefined ? Number(dec) : hex !== undefined ? Number.parseInt(hex, 16) : -1;
    if (code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      bad = true;
      return "";
    }
    return String.fromCodePoint(code);
  });
  return bad ? undefined : text;
}

/** An ETag as S3 writes it ("&quot;hex&quot;"), without the general path. */
function etagText(raw: string): string | undefined {
  if (raw.length >= 12 && raw.startsWith("&quot;") && raw.endsWith("&quot;")) {
    const inner = raw.slice(6, -6);
    if (!inner.includes("&")) return `"${inner}"`;
  }
  return xmlText(raw);
}

/** The text of the first `<tag>…</tag>` in `xml` between `from` and `to`; undefined when absent or malformed. */
function child(xml: string, tag: string, from: number, to: number): string | undefined {
  const open = `<${tag}>`;
  const start = xml.indexOf(open, from);
  if (start === -1 || start >= to) return undefined;
  const end = xml.indexOf(`</${tag}>`, start + open.length);
  if (end === -1 || end > to) return undefined;
  return xml.slice(start + open.length, end);
}

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A timestamp as the SDK path gives it (toISOString), without a Date when it already is one. */
function isoTime(raw: string | undefined): string | null | false {
  if (raw === undefined) return null;
  if (ISO_MS.test(raw)) return raw;
  const t = Date.parse(raw);
  return Number.isNaN(t) ? false : new Date(t).toISOString();
}

/** Forms this reader does not handle: CDATA, DTDs, attributes, namespace prefixes or empty forms of the elements it reads. */
const UNHANDLED = [
  "<![CDATA[",
  "<!DOCTYPE",
  "<!ENTITY",
  ":Contents>",
  ":Key>",
  ":CommonPrefixes>",
  "<Contents ",
  "<Contents/",
  "<Key ",
  "<Key/",
  "<CommonPrefixes ",
  "<CommonPrefixes/",
  "<Prefix ",
  "<IsTruncated ",
  "<KeyCount ",
];

/** Parses a ListObjectsV2 answer; undefined when it is not one this reader is sure of. */
export function parseListObjectsV2(xml: string): RawListPage | undefined {
  if (UNHANDLED.some((form) => xml.includes(form))) return undefined;
  const root = xml.indexOf("<ListBucketResult");
  const rootEnd = xml.lastIndexOf("</ListBucketResult>");
  if (root === -1 || rootEnd === -1) return undefined;
  // Tags cannot occur in text (a "<" there is escaped), and these exist only at the top level.
  const top = (tag: string) => child(xml, tag, root, rootEnd);
  const truncated = top("IsTruncated");
  if (truncated !== "true" && truncated !== "false") return undefined;
  const tokenRaw = top("NextContinuationToken");
  const token = tokenRaw === undefined ? null : xmlText(tokenRaw);
  if (token === undefined) return undefined;
  const page: RawListPage = {
    contents: [],
    commonPrefixes: [],
    isTruncated: truncated === "true",
    nextContinuationToken: token,
  };
  for (let at = xml.indexOf("<Contents>", root); at !== -1 && at < rootEnd; at = xml.indexOf("<Contents>", at)) {
    const end = xml.indexOf("</Contents>", at);
    if (end === -1) return undefined;
    // One entry's text alone, so that a field it lacks is not searched for in the rest of the page.
    const entry = xml.slice(at + 10, end);
    const keyRaw = child(entry, "Key", 0, entry.length);
    const key = keyRaw === undefined ? undefined : xmlText(keyRaw);
    const sizeRaw = child(entry, "Size", 0, entry.length);
    const size = sizeRaw === undefined ? 0 : Number(sizeRaw);
    const modified = isoTime(child(entry, "LastModified", 0, entry.length));
    const etagRaw = child(entry, "ETag", 0, entry.length);
    const etag = etagRaw === undefined ? null : etagText(etagRaw);
    const classRaw = child(entry, "StorageClass", 0, entry.length);
    if (key === undefined || !Number.isSafeInteger(size) || size < 0 || modified === false || etag === undefined)
      return undefined;
    page.contents.push({
      key,
      size,
      lastModified: modified,
      etag,
      storageClass: classRaw === undefined ? null : (xmlText(classRaw) ?? null),
    });
    at = end + 11;
  }
  for (
    let at = xml.indexOf("<CommonPrefixes>", root);
    at !== -1 && at < rootEnd;
    at = xml.indexOf("<CommonPrefixes>", at)
  ) {
    const end = xml.indexOf("</CommonPrefixes>", at);
    if (end === -1) return undefined;
    const raw = child(xml, "Prefix", at, end);
    const prefix = raw === undefined ? undefined : xmlText(raw);
    if (prefix === undefined) return undefined;
    page.commonPrefixes.push(prefix);
    at = end + 17;
  }
  // A store that counts its page (KeyCount: keys plus common prefixes) must agree with what was read.
  const count = top("KeyCount");
  if (count !== undefined && Number(count) !== page.contents.length + page.commonPrefixes.length) return undefined;
  return page;
}
