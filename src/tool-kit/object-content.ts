/**
 * How get_object (read mode) presents bytes to the model: text, an image, an
 * embedded binary resource, or only a summary. Pure functions, unit-tested.
 */
import { fitJsonText } from "../runtime/response-budget.ts";

const TEXT_TYPES = new Set([
  "application/json",
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/javascript",
  "application/ecmascript",
  "application/x-javascript",
  "application/typescript",
  "application/x-sh",
  "application/x-shellscript",
  "application/sql",
  "application/graphql",
  "application/csv",
  "application/x-ndjson",
  "application/ndjson",
  "application/jsonl",
  "application/x-httpd-php",
  "application/x-python",
  "application/x-www-form-urlencoded",
  "application/x-tex",
  "application/rtf",
  "application/x-subrip",
  "application/manifest+json",
]);
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const UNKNOWN_TYPES = new Set(["", "application/octet-stream", "binary/octet-stream", "application/unknown"]);

export type ContentKind = "text" | "image" | "binary";

/** The bare media type, lowercase, without parameters. */
export function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

export function isTextType(type: string): boolean {
  return (
    type.startsWith("text/") ||
    TEXT_TYPES.has(type) ||
    type.endsWith("+json") ||
    type.endsWith("+xml") ||
    type.endsWith("+yaml")
  );
}

/** Image type by magic bytes, for objects stored without a useful content type. */
export function sniffImage(bytes: Uint8Array): string | undefined {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (
    starts(0x52, 0x49, 0x46, 0x46) &&
    bytes[8] === 0x57 &&
    bytes[9] === 0x45 &&
    bytes[10] === 0x42 &&
    bytes[11] === 0x50
  )
    return "image/webp";
  return undefined;
}

/** Drops an incomplete UTF-8 sequence at the end (a cut in the middle of a character). */
export function trimPartialUtf8(bytes: Uint8Array): Uint8Array {
  const n = bytes.length;
  // Look back at most 3 bytes for the start of the last character.
  for (let back = 1; back <= Math.min(4, n); back++) {
    const b = bytes[n - back]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? bytes.subarray(0, n - back) : bytes;
  }
  return bytes;
}

/** Decodes strict UTF-8, or undefined when the bytes are not valid UTF-8 text. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

export type Presented =
  | { kind: "text"; text: string; returnedBytes: number; encoding: "utf-8" }
  | { kind: "image"; mimeType: string; base64: string; returnedBytes: number; encoding: "base64" }
  | { kind: "binary"; mimeType: string; base64: string; returnedBytes: number; encoding: "base64" }
  | { kind: "omitted"; returnedBytes: 0; encoding: "none" };

/**
 * Decides the presentation. Text is returned exactly (cut on a character
 * boundary when truncated); images and other binary only when complete, since
 * half an image or archive is of no use to a model.
 */
export function present(contentType: string | null, bytes: Uint8Array, truncated: boolean): Presented {
  const type = mediaType(contentType);
  const body = truncated ? trimPartialUtf8(bytes) : bytes;
  if (isTextType(type)) {
    const text = decodeUtf8(body) ?? new TextDecoder("utf-8").decode(body);
    return { kind: "text", text, returnedBytes: body.length, encoding: "utf-8" };
  }
  const image = IMAGE_TYPES.has(type) ? type : UNKNOWN_TYPES.has(type) ? sniffImage(bytes) : undefined;
  if (!image && UNKNOWN_TYPES.has(type)) {
    const text = decodeUtf8(body);
    if (text !== undefined) return { kind: "text", text, returnedBytes: body.length, encoding: "utf-8" };
  }
  if (truncated) return { kind: "omitted", returnedBytes: 0, encoding: "none" };
  const base64 = Buffer.from(bytes).toString("base64");
  if (image) return { kind: "image", mimeType: image, base64, returnedBytes: bytes.length, encoding: "base64" };
  return {
    kind: "binary",
    mimeType: type || "application/octet-stream",
    base64,
    returnedBytes: bytes.length,
    encoding: "base64",
  };
}

/**
 * Keeps the content within the response budget: text is cut on a character
 * boundary where its JSON form (escapes included) would pass it; an image or
 * binary whose base64 would pass it is omitted, as half of one is of no use.
 */
export function fitToBudget(shown: Presented, budget: number): { shown: Presented; cutToFit: boolean } {
  if (shown.kind === "text") {
    const fit = fitJsonText(shown.text, budget);
    if (!fit.cut) return { shown, cutToFit: false };
    return { shown: { ...shown, text: fit.text, returnedBytes: Buffer.byteLength(fit.text, "utf8") }, cutToFit: true };
  }
  if ((shown.kind === "image" || shown.kind === "binary") && shown.base64.length + 2 > budget) {
    return { shown: { kind: "omitted", returnedBytes: 0, encoding: "none" }, cutToFit: true };
  }
  return { shown, cutToFit: false };
}

/** UTF-8 continuation bytes (10xxxxxx) at the start of a window: the tail of a character that began before it. */
export function leadingContinuationBytes(bytes: Uint8Array): number {
  let n = 0;
  while (n < 3 && n < bytes.length && (bytes[n]! & 0xc0) === 0x80) n++;
  return n;
}
