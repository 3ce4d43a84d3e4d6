/** An image's format and size from its first bytes: PNG, JPEG, GIF, WebP, BMP. */
export interface ImageFacts {
  format: "png" | "jpeg" | "gif" | "webp" | "bmp";
  width: number;
  height: number;
}

export function imageFacts(b: Uint8Array): ImageFacts | undefined {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const ascii = (at: number, n: number) => String.fromCharCode(...b.subarray(at, at + n));
  if (b.length >= 24 && b[0] === 0x89 && ascii(1, 3) === "PNG")
    return { format: "png", width: v.getUint32(16), height: v.getUint32(20) };
  if (b.length >= 10 && ascii(0, 3) === "GIF")
    return { format: "gif", width: v.getUint16(6, true), height: v.getUint16(8, true) };
  if (b.length >= 26 && ascii(0, 2) === "BM")
    return { format: "bmp", width: v.getInt32(18, true), height: Math.abs(v.getInt32(22, true)) };
  if (b.length >= 30 && ascii(0, 4) === "RIFF" && ascii(8, 4) === "WEBP") {
    const kind = ascii(12, 4);
    if (kind === "VP8 ")
      return { format: "webp", width: v.getUint16(26, true) & 0x3fff, height: v.getUint16(28, true) & 0x3fff };
    if (kind === "VP8L") {
      const bits = v.getUint32(21, true);
      return { format: "webp", width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
    if (kind === "VP8X")
      return {
        format: "webp",
        width: 1 + (b[24]! | (b[25]! << 8) | (b[26]! << 16)),
        height: 1 + (b[27]! | (b[28]! << 8) | (b[29]! << 16)),
      };
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    // JPEG: walk the markers to a start-of-frame.
    let p = 2;
    while (p + 9 < b.length) {
      if (b[p] !== 0xff) return undefined;
      const marker = b[p + 1]!;
      const len = v.getUint16(p + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
        return { format: "jpeg", height: v.getUint16(p + 5), width: v.getUint16(p + 7) };
      p += 2 + len;
    }
  }
  return undefined;
}
