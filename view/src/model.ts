/** What the object browser shows, computed from tool results: no DOM here, so it is tested on its own. */

/** Where the server lists the tools a caller may use, on list_buckets / list_objects results (src/object-browser.ts). */
export const OFFERED_TOOLS_META = "store-mcp-server/tools";

/** Keys per page the browser asks for: a page renders at once, a prefix of any size is paged. */
export const PAGE_SIZE = 100;
/** Bytes of a text object the preview shows. */
export const TEXT_PREVIEW_BYTES = 64 * 1024;
/** put_object's limit: larger files need upload_file or a presigned PUT. */
export const UPLOAD_MAX_BYTES = 4 * 1024 * 1024;
/** Images read inline (base64 through the host) when no presigned URL can be shown. */
export const INLINE_IMAGE_MAX_BYTES = 2 * 1024 * 1024;

export interface ToolResult {
  content?: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

export interface ObjectRow {
  key: string;
  size: number;
  last_modified: string | null;
  etag: string | null;
  storage_class: string | null;
}

export interface ListPage {
  bucket: string;
  prefix: string | null;
  objects: ObjectRow[];
  common_prefixes: string[];
  is_truncated: boolean;
  next_continuation_token: string | null;
}

export interface Entry {
  kind: "folder" | "object";
  /** The whole key (a folder's ends with "/"). */
  key: string;
  /** The key below the current prefix. */
  name: string;
  size?: number;
  modified?: string | null;
  storageClass?: string | null;
}

export type SortField = "name" | "size" | "modified";
export interface Sort {
  by: SortField;
  descending: boolean;
}

/** The rows of a listing page below `prefix`: folders, then objects; a folder's own marker object is left out. */
export function entriesOf(page: ListPage, prefix: string): Entry[] {
  const folders: Entry[] = page.common_prefixes.map((key) => ({ kind: "folder", key, name: key.slice(prefix.length) }));
  const objects: Entry[] = page.objects
    .filter((o) => o.key !== prefix)
    .map((o) => ({
      kind: "object",
      key: o.key,
      name: o.key.slice(prefix.length),
      size: o.size,
      modified: o.last_modified,
      storageClass: o.storage_class,
    }));
  return [...folders, ...objects];
}

/** Sorted within the page, folders always first. */
export function sortEntries(entries: readonly Entry[], sort: Sort): Entry[] {
  const sign = sort.descending ? -1 : 1;
  const byField = (a: Entry, b: Entry): number => {
    if (sort.by === "size") return (a.size ?? 0) - (b.size ?? 0);
    if (sort.by === "modified") return (a.modified ?? "").localeCompare(b.modified ?? "");
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  };
  return [...entries].sort((a, b) =>
    a.kind !== b.kind ? (a.kind === "folder" ? -1 : 1) : sign * byField(a, b) || (a.name < b.name ? -1 : 1),
  );
}

/** Rows whose name contains the text, ignoring case. */
export function filterEntries(entries: readonly Entry[], text: string): Entry[] {
  const needle = text.trim().toLowerCase();
  return needle ? entries.filter((e) => e.name.toLowerCase().includes(needle)) : [...entries];
}

export interface Crumb {
  label: string;
  /** undefined: the bucket list; otherwise the prefix to open in `bucket`. */
  prefix?: string;
}

/** Buckets › bucket › folder › folder, each with the prefix it opens. */
export function crumbsOf(bucket: string | undefined, prefix: string): Crumb[] {
  const crumbs: Crumb[] = [{ label: "Buckets" }];
  if (bucket === undefined) return crumbs;
  crumbs.push({ label: bucket, prefix: "" });
  let at = "";
  for (const part of prefix.split("/").slice(0, -1)) {
    at += `${part}/`;
    crumbs.push({ label: part || "(empty)", prefix: at });
  }
  return crumbs;
}

/** The folder above `prefix` ("a/b/" → "a/"), or undefined at the bucket's top. */
export function parentOf(prefix: string): string | undefined {
  if (!prefix) return undefined;
  const cut = prefix.slice(0, -1).lastIndexOf("/");
  return cut < 0 ? "" : prefix.slice(0, cut + 1);
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

export function formatSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value < 10 ? value.toFixed(1) : Math.round(value)} ${UNITS[unit]}`;
}

export function formatDate(iso: string | null | undefined, locale?: string, timeZone?: string): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  try {
    return date.toLocaleString(locale, { dateStyle: "medium", timeStyle: "short", ...(timeZone ? { timeZone } : {}) });
  } catch {
    return date.toISOString();
  }
}

const TEXT_TYPES =
  /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|x-sh|toml|sql|x-ndjson|ld\+json|csv)|image\/svg\+xml$)/;
const TEXT_NAMES = /\.(txt|md|csv|tsv|json|ya?ml|xml|html?|css|js|ts|py|sh|log|ini|toml|conf|sql|ndjson)$/i;
const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp|avif|bmp|svg\+xml|x-icon|vnd\.microsoft\.icon)$/;
const IMAGE_NAMES = /\.(png|jpe?g|gif|webp|avif|bmp)$/i;

export type PreviewKind = "image" | "text" | "none";

/** How an object can be previewed: images as images, text as text, anything else by its metadata. Without a useful type (no head_object, or a generic one), by the key's extension. */
export function previewKind(contentType: string | null | undefined, key: string): PreviewKind {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  const generic = !type || type === "application/octet-stream" || type === "binary/octet-stream";
  if (IMAGE_TYPES.test(type) || (generic && IMAGE_NAMES.test(key))) return "image";
  if (TEXT_TYPES.test(type) || (generic && TEXT_NAMES.test(key))) return "text";
  return "none";
}

/** The text a failed call carries (the server's error with its "Next:" advice). */
export function errorTextOf(result: ToolResult): string {
  const text = (result.content ?? [])
    .filter((c) => c.type === "text" && c.text)
    .map((c) => c.text)
    .join("\n");
  return text || "The call failed without a message.";
}

/** The tools the server offers this caller, from a result's _meta; undefined when the result does not say. */
export function offeredToolsOf(result: ToolResult): Set<string> | undefined {
  const tools = result._meta?.[OFFERED_TOOLS_META];
  return Array.isArray(tools) ? new Set(tools.filter((t): t is string => typeof t === "string")) : undefined;
}

/** A list_objects result's page, when the result is one. */
export function listPageOf(result: ToolResult): ListPage | undefined {
  const s = result.structuredContent;
  if (!s || typeof s.bucket !== "string" || !Array.isArray(s.objects) || !Array.isArray(s.common_prefixes))
    return undefined;
  return s as unknown as ListPage;
}

export interface BucketRow {
  name: string;
  creation_date: string | null;
}

/** A list_buckets result's buckets, when the result is one. */
export function bucketsOf(result: ToolResult): BucketRow[] | undefined {
  const buckets = result.structuredContent?.buckets;
  return Array.isArray(buckets) ? (buckets as BucketRow[]) : undefined;
}

/** Base64 of bytes, in chunks (String.fromCharCode of a whole file overflows the stack). */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The names a delete dialog shows: the first `shown`, then how many more. */
export function namesToConfirm(keys: readonly string[], shown = 20): { names: string[]; more: number } {
  return { names: keys.slice(0, shown), more: Math.max(0, keys.length - shown) };
}

export interface UsageBar {
  label: string;
  bytes: number;
  objects: number;
  /** Share of the largest group, 0-100. */
  percent: number;
}

/** storage_usage groups (whole prefixes) as bars scaled to the largest, named below `prefix`. */
export function usageBarsOf(
  groups: readonly { group: string; objects: number; bytes: number }[],
  prefix: string,
): UsageBar[] {
  const largest = Math.max(1, ...groups.map((g) => g.bytes));
  return [...groups]
    .sort((a, b) => b.bytes - a.bytes)
    .map((g) => ({
      label:
        g.group === prefix ? "(objects here)" : g.group.startsWith(prefix) ? g.group.slice(prefix.length) : g.group,
      bytes: g.bytes,
      objects: g.objects,
      percent: Math.max(0.5, (g.bytes / largest) * 100),
    }));
}

/** A file name for Content-Disposition: the key's last segment, quoted safely. */
export function attachmentOf(key: string): string {
  const name = key.split("/").filter(Boolean).pop() ?? "download";
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
