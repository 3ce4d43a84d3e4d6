import { expect, test } from "bun:test";
import { present, trimPartialUtf8 } from "../../../src/tool-kit/object-content.ts";

const utf8 = (s: string) => new TextEncoder().encode(s);

test("text types come back exactly as text", () => {
  const p = present("text/plain; charset=utf-8", utf8("héllo\n"), false);
  expect(p).toMatchObject({ kind: "text", text: "héllo\n", encoding: "utf-8", returnedBytes: 7 });
  expect(present("application/vnd.api+json", utf8("{}"), false).kind).toBe("text");
});

test("a truncated text is cut on a character boundary", () => {
  const bytes = utf8("aé€😀");
  // 1 + 2 + 3 + 4 bytes; cut inside each multi-byte character.
  expect(new TextDecoder().decode(trimPartialUtf8(bytes.subarray(0, 2)))).toBe("a");
  expect(new TextDecoder().decode(trimPartialUtf8(bytes.subarray(0, 5)))).toBe("aé");
  expect(new TextDecoder().decode(trimPartialUtf8(bytes.subarray(0, 9)))).toBe("aé€");
  expect(trimPartialUtf8(bytes).length).toBe(10);
  const p = present("text/plain", bytes.subarray(0, 9), true);
  expect(p).toMatchObject({ kind: "text", text: "aé€", returnedBytes: 6 });
});

test("unknown type: valid UTF-8 is text, other bytes are binary", () => {
  expect(present(null, utf8("plain words"), false).kind).toBe("text");
  expect(present("application/octet-stream", new Uint8Array([0, 1, 2, 255]), false)).toMatchObject({
    kind: "binary",
    encoding: "base64",
  });
});

test("images: by type, or sniffed when the type is unknown; truncated binary is omitted", () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);
  expect(present("image/png", png, false)).toMatchObject({ kind: "image", mimeType: "image/png" });
  expect(present("application/octet-stream", png, false)).toMatchObject({ kind: "image", mimeType: "image/png" });
  expect(present("image/png", png, true)).toMatchObject({ kind: "omitted", encoding: "none", returnedBytes: 0 });
  expect(present("application/zip", new Uint8Array([0x50, 0x4b, 3, 4]), false)).toMatchObject({
    kind: "binary",
    mimeType: "application/zip",
  });
});
