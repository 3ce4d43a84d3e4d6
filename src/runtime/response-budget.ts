/**
 * Every response must fit what a client can read: the MCP SDK's stdio reader
 * (client and server side) closes the connection on one message over 10 MiB.
 * Sizes are of the serialized JSON, where base64 grows binary by a third and
 * a control character becomes six bytes (\u0001).
 */

/** The most one serialized tool result may take: well under the 10 MiB readers accept. */
export const MAX_RESPONSE_BYTES = 6 * 1024 * 1024;
/** Room kept for the summary text, structured content and the JSON-RPC envelope. */
const ENVELOPE_ROOM = 64 * 1024;
/** What a tool may spend on its content blocks. */
export const CONTENT_BUDGET_BYTES = MAX_RESPONSE_BYTES - ENVELOPE_ROOM;

/** Bytes one UTF-16 code unit takes in UTF-8 JSON, surrogate pairs counted on their high half. */
function jsonBytes(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0x20) return c === 0x0a || c === 0x0d || c === 0x09 || c === 0x08 || c === 0x0c ? 2 : 6;
  if (c === 0x22 || c === 0x5c) return 2;
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = text.charCodeAt(i + 1);
    return next >= 0xdc00 && next <= 0xdfff ? 4 : 6;
  }
  if (c >= 0xdc00 && c <= 0xdfff)
    return i > 0 && text.charCodeAt(i - 1) >= 0xd800 && text.charCodeAt(i - 1) <= 0xdbff ? 0 : 6;
  return 3;
}

/** The longest prefix of `text` whose JSON string form fits `maxBytes`, cut between characters. */
export function fitJsonText(text: string, maxBytes: number): { text: string; cut: boolean } {
  // Nothing expands past 6 bytes a code unit: most texts are settled without a scan.
  if (text.length * 6 + 2 <= maxBytes) return { text, cut: false };
  let total = 2;
  for (let i = 0; i < text.length; i++) {
    total += jsonBytes(text, i);
    if (total > maxBytes) {
      // Do not split a surrogate pair.
      const end = i > 0 && text.charCodeAt(i) >= 0xdc00 && text.charCodeAt(i) <= 0xdfff ? i - 1 : i;
      return { text: text.slice(0, end), cut: true };
    }
  }
  return { text, cut: false };
}

/** Bytes of `text` as a JSON string (quotes included), counted without building it. */
export function jsonStringBytes(text: string): number {
  let total = 2;
  for (let i = 0; i < text.length; i++) total += jsonBytes(text, i);
  return total;
}

/**
 * Whether a result's serialized form fits `maxBytes`. Large strings are
 * counted in place rather than serialized: a second copy of a 6 MiB answer
 * is exactly the memory this guards.
 */
export function fitsResponse(
  result: { content: unknown[]; structuredContent?: unknown },
  maxBytes = MAX_RESPONSE_BYTES,
): boolean {
  let total =
    4096 + (result.structuredContent === undefined ? 0 : Buffer.byteLength(JSON.stringify(result.structuredContent)));
  for (const block of result.content as {
    text?: string;
    data?: string;
    resource?: { blob?: string; text?: string };
  }[]) {
    total += 200;
    for (const value of [block.text, block.data, block.resource?.blob, block.resource?.text]) {
      if (value !== undefined)
        total += value.length * 6 + 2 <= maxBytes - total ? value.length * 6 + 2 : jsonStringBytes(value);
    }
    if (total > maxBytes) return false;
  }
  return total <= maxBytes;
}
