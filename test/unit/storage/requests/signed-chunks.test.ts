import { describe, expect, test } from "bun:test";
import {
  ChunkDigests,
  ChunkSigner,
  encodedLength,
  SignedFrames,
  signedChunkHeaders,
} from "../../../../src/storage/requests/signed-chunks.ts";
import { signV4 } from "../../../../src/storage/requests/sigv4.ts";

/** AWS's worked example ("Transferring payload in multiple chunks", Example: PUT Object): 66,560 bytes of "a" in 64 KiB chunks. */
const EXAMPLE = {
  identity: { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
  at: new Date("2013-05-24T00:00:00Z"),
  size: 66560,
  chunk: 65536,
  seed: "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9",
  chunks: [
    "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
    "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
    "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
  ],
  encodedLength: 66824,
};

function exampleSeed() {
  return signV4(
    {
      method: "PUT",
      path: "/examplebucket/chunkObject.txt",
      query: {},
      headers: {
        host: "s3.amazonaws.com",
        "x-amz-storage-class": "REDUCED_REDUNDANCY",
        ...signedChunkHeaders(EXAMPLE.size, EXAMPLE.chunk),
      },
    },
    EXAMPLE.identity,
    "us-east-1",
    "s3",
    EXAMPLE.at,
  );
}

/** A source handing out `bytes` in pieces of `piece` (at most what is asked), feeding `digests` as a streamed part does. */
function pieces(bytes: Uint8Array, piece: number, digests: ChunkDigests) {
  let at = 0;
  return async () => {
    const out = bytes.subarray(at, at + piece);
    at += out.length;
    digests.update(out);
    return out;
  };
}

async function framed(frames: SignedFrames): Promise<Buffer> {
  const out: Uint8Array[] = [];
  for (let frame = await frames.nextFrame(); frame; frame = await frames.nextFrame()) out.push(...frame.pieces);
  return Buffer.concat(out);
}

describe("a body signed chunk by chunk (STREAMING-AWS4-HMAC-SHA256-PAYLOAD)", () => {
  test("AWS's worked example: the seed signature, every chunk's signature, the frames and their length", async () => {
    const { headers, seed } = exampleSeed();
    expect(seed.signature).toBe(EXAMPLE.seed);
    expect(headers["content-length"]).toBe(String(EXAMPLE.encodedLength));
    const body = new Uint8Array(EXAMPLE.size).fill("a".charCodeAt(0));
    // Pieces that straddle the chunk boundary: cut there, not copied.
    for (const piece of [EXAMPLE.size, 40_000, 1000]) {
      const digests = new ChunkDigests(EXAMPLE.chunk);
      const frames = new SignedFrames(
        EXAMPLE.size,
        new ChunkSigner(seed),
        digests,
        pieces(body, piece, digests),
        EXAMPLE.chunk,
      );
      const expected =
        `10000;chunk-signature=${EXAMPLE.chunks[0]}\r\n${"a".repeat(65536)}\r\n` +
        `400;chunk-signature=${EXAMPLE.chunks[1]}\r\n${"a".repeat(1024)}\r\n` +
        `0;chunk-signature=${EXAMPLE.chunks[2]}\r\n\r\n`;
      const out = await framed(frames);
      expect(out.toString()).toBe(expected);
      expect(out.length).toBe(EXAMPLE.encodedLength);
    }
  });

  test("the length of a framed body, a chunk at a time, exact and empty", async () => {
    const { seed } = exampleSeed();
    for (const size of [0, 1, 255, 256, 257, 1000, 4096]) {
      const digests = new ChunkDigests(256);
      const frames = new SignedFrames(
        size,
        new ChunkSigner(seed),
        digests,
        pieces(new Uint8Array(size), 100, digests),
        256,
      );
      expect((await framed(frames)).length).toBe(encodedLength(size, 256));
    }
  });

  test("a source that ends early fails the body rather than framing short", async () => {
    const { seed } = exampleSeed();
    const digests = new ChunkDigests(256);
    const frames = new SignedFrames(
      600,
      new ChunkSigner(seed),
      digests,
      pieces(new Uint8Array(300), 100, digests),
      256,
    );
    await frames.nextFrame();
    await expect(frames.nextFrame()).rejects.toThrow("the body ended after 300 of 600 bytes");
  });

  test("digests: the same bytes in other pieces have the same fingerprint; one byte changed or one missing does not", () => {
    const bytes = new Uint8Array(1000).map((_, i) => i % 251);
    const whole = new ChunkDigests(256).fed(bytes).fingerprint();
    const inPieces = new ChunkDigests(256);
    for (let at = 0; at < bytes.length; at += 77) inPieces.update(bytes.subarray(at, at + 77));
    expect(inPieces.fingerprint().equals(whole)).toBe(true);
    const changed = Uint8Array.from(bytes);
    changed[600] = changed[600]! ^ 1;
    expect(new ChunkDigests(256).fed(changed).fingerprint().equals(whole)).toBe(false);
    expect(new ChunkDigests(256).fed(bytes.subarray(0, 999)).fingerprint().equals(whole)).toBe(false);
    // A fingerprint taken mid-run leaves the run open: more bytes fed after it count.
    const growing = new ChunkDigests(256).fed(bytes.subarray(0, 500));
    growing.fingerprint();
    expect(growing.fed(bytes.subarray(500)).fingerprint().equals(whole)).toBe(true);
  });
});
