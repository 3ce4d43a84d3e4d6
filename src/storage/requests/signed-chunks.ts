/**
 * A request body signed chunk by chunk: SigV4's
 * STREAMING-AWS4-HMAC-SHA256-PAYLOAD ("transferring the payload in multiple
 * chunks"). Each chunk of at most CHUNK bytes goes out framed as
 * `hex(size);chunk-signature=<signature>\r\n<bytes>\r\n`, its signature an
 * HMAC of the one before and of the chunk's SHA-256 (the first continues the
 * request's own signature), and an empty chunk closes the body. The store
 * checks every chunk's signature as it reads it and refuses the request at
 * the first that does not match: the bytes are checked as Content-MD5 checks
 * them, but a streamed body can have it (a chunk's hash needs only that chunk
 * before it goes, where Content-MD5 needs the whole body), and SHA-256 costs
 * about a third of MD5's CPU on these CPUs (SHA-NI; docs/performance.md).
 * Used only where a store is known to check it (quirks.ts, signedChunks): one
 * that does not know the encoding could keep the frames as the object's bytes.
 */
import { createHash, createHmac, type Hash } from "node:crypto";
import { type ChunkSeed, EMPTY_SHA256 } from "./sigv4.ts";

/** The bytes each signature covers: fewer frames (and HMACs) than the network's chunks, little held before one goes. */
export const CHUNK = 256 * 1024;
const SIGNATURE = ";chunk-signature=";
/** A frame's bytes besides its size in hex and its data: the signature's name and value, two CRLFs. */
const FRAME_EXTRA = SIGNATURE.length + 64 + 4;

/** The headers of a body of `length` bytes signed chunk by chunk: its encoding, its length before and after. */
export function signedChunkHeaders(length: number, chunk = CHUNK): Record<string, string> {
  return {
    "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
    "content-encoding": "aws-chunked",
    "x-amz-decoded-content-length": String(length),
    "content-length": String(encodedLength(length, chunk)),
  };
}

/** What `length` bytes are once framed: every chunk's frame and the closing one. */
export function encodedLength(length: number, chunk = CHUNK): number {
  const frame = (size: number) => size.toString(16).length + FRAME_EXTRA + size;
  const rest = length % chunk;
  return Math.floor(length / chunk) * frame(chunk) + (rest > 0 ? frame(rest) : 0) + frame(0);
}

/** Each chunk's signature, chained from the request's. */
export class ChunkSigner {
  #previous: string;

  constructor(private readonly seed: ChunkSeed) {
    this.#previous = seed.signature;
  }

  /** The frame's head for the next chunk: its size and its signature, given the SHA-256 of its bytes (hex). */
  head(size: number, sha256: string): string {
    const { key, longDate, scope } = this.seed;
    const toSign = `AWS4-HMAC-SHA256-PAYLOAD\n${longDate}\n${scope}\n${this.#previous}\n${EMPTY_SHA256}\n${sha256}`;
    this.#previous = createHmac("sha256", key).update(toSign).digest("hex");
    return `${size.toString(16)}${SIGNATURE}${this.#previous}\r\n`;
  }
}

/**
 * The SHA-256 of every CHUNK-sized run of the bytes fed, in order (the last
 * may be shorter): the chunks' hashes the signatures need, made as the bytes
 * are read from the source, and what bytes read once more must match.
 */
export class ChunkDigests {
  readonly #digests: Buffer[] = [];
  #hash: Hash | undefined;
  #inRun = 0;

  constructor(private readonly chunk = CHUNK) {}

  /** `update`, returning the digests (for bytes fed at once). */
  fed(bytes: Uint8Array): this {
    this.update(bytes);
    return this;
  }

  update(bytes: Uint8Array): void {
    for (let at = 0; at < bytes.length; ) {
      this.#hash ??= createHash("sha256");
      const n = Math.min(bytes.length - at, this.chunk - this.#inRun);
      this.#hash.update(at === 0 && n === bytes.length ? bytes : bytes.subarray(at, at + n));
      this.#inRun += n;
      at += n;
      if (this.#inRun === this.chunk) this.#close();
    }
  }

  /** The hash of run `index`, once its bytes were all fed (the last, shorter, run is closed by asking for it). */
  of(index: number): Buffer {
    if (index === this.#digests.length && this.#hash) this.#close();
    const digest = this.#digests[index];
    if (!digest) throw new Error(`chunk ${index} was not read whole`);
    return digest;
  }

  /** Every run's hash so far, the open one's too: equal for the same bytes fed, whatever their pieces. */
  fingerprint(): Buffer {
    const open = this.#hash ? [this.#hash.copy().digest()] : [];
    return Buffer.concat([...this.#digests, ...open]);
  }

  #close(): void {
    this.#digests.push(this.#hash!.digest());
    this.#hash = undefined;
    this.#inRun = 0;
  }
}

/** What a signed body reads from: the source's next bytes (fed to the digests by the reader; empty: it ended). */
export type NextBytes = () => Promise<Uint8Array>;

/** A frame: what to send, and the source's pieces it used up (freed once it is sent). */
export interface Frame {
  pieces: Uint8Array[];
  spent: Uint8Array[];
}

/**
 * A body of `length` bytes framed and signed a chunk at a time, read through
 * `next` (which feeds `digests` every byte it hands over). The source's
 * pieces go out as they are held. One that crosses a chunk's end is cut: the
 * rest is copied (at most a piece a chunk) so that the piece itself can be
 * freed once sent; a view of it left for later would keep its whole buffer
 * until a collection (the copy's peak rose 13-22 MB).
 */
export class SignedFrames {
  #framed = 0;
  #index = 0;
  #carry: Uint8Array | undefined;
  #closed = false;
  readonly #encoder = new TextEncoder();

  constructor(
    private readonly length: number,
    private readonly signer: ChunkSigner,
    private readonly digests: ChunkDigests,
    private readonly next: NextBytes,
    private readonly chunk = CHUNK,
  ) {}

  /** The next chunk's frame (head, bytes, CRLF); the closing frame after the last; then undefined. */
  async nextFrame(): Promise<Frame | undefined> {
    if (this.#closed) return undefined;
    if (this.#framed === this.length) {
      this.#closed = true;
      return { pieces: [this.#encoder.encode(`${this.signer.head(0, EMPTY_SHA256)}\r\n`)], spent: [] };
    }
    const size = Math.min(this.chunk, this.length - this.#framed);
    const pieces: Uint8Array[] = [];
    const spent: Uint8Array[] = [];
    for (let have = 0; have < size; ) {
      let piece = this.#carry ?? (await this.next());
      this.#carry = undefined;
      if (piece.length === 0) throw new Error(`the body ended after ${this.#framed + have} of ${this.length} bytes`);
      spent.push(piece);
      if (piece.length > size - have) {
        this.#carry = piece.slice(size - have);
        piece = piece.subarray(0, size - have);
      }
      pieces.push(piece);
      have += piece.length;
    }
    this.#framed += size;
    const head = this.signer.head(size, this.digests.of(this.#index++).toString("hex"));
    return { pieces: [this.#encoder.encode(head), ...pieces, this.#encoder.encode("\r\n")], spent };
  }
}
