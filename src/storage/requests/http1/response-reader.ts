/**
 * Reads one HTTP/1.1 response from the bytes of a connection as they come
 * (RFC 9112): its head, then its body framed as the head says — a
 * Content-Length, chunked, none (a HEAD, 1xx, 204, 304) or up to the close.
 * Body bytes are handed on as views of the bytes fed, never copied. 1xx
 * answers are skipped. Anything malformed throws (the connection is then
 * useless and is closed).
 */

/** A response head bigger than this is refused: S3 heads are a few KB, user metadata included. */
const MAX_HEAD_BYTES = 64 * 1024;
const CRLF_CRLF = Buffer.from("\r\n\r\n");

export interface ResponseHead {
  status: number;
  statusText: string;
  /** In the order sent; a repeated name is repeated. */
  headers: [string, string][];
  /** Whether the connection may carry another request once this body is read. */
  reusable: boolean;
  /** No body follows (a HEAD's answer, 204, 304). */
  bodyless: boolean;
}

export interface ResponseSink {
  head(head: ResponseHead): void;
  body(bytes: Uint8Array): void;
  end(): void;
}

type Framing =
  | { kind: "head" }
  | { kind: "length"; left: number }
  | { kind: "chunk-size" }
  | { kind: "chunk-data"; left: number }
  | { kind: "chunk-end" }
  | { kind: "trailers" }
  | { kind: "close" }
  | { kind: "done" };

export class ResponseReader {
  private framing: Framing = { kind: "head" };
  /** A head or a chunk's size line not yet whole. */
  private pending: Uint8Array = new Uint8Array(0);

  constructor(
    private readonly sink: ResponseSink,
    /** A HEAD's answer has no body, whatever its Content-Length says. */
    private readonly bodyless: boolean,
  ) {}

  get done(): boolean {
    return this.framing.kind === "done";
  }

  /** Whether bytes are still expected: a close now cuts the response short (except a body that runs to the close). */
  get midway(): boolean {
    return this.framing.kind !== "done" && this.framing.kind !== "close";
  }

  /** The connection was closed: a body read up to the close ends here. */
  closed(): void {
    if (this.framing.kind === "close") this.finish();
  }

  feed(input: Uint8Array): void {
    let bytes = input;
    while (bytes.length > 0 && this.framing.kind !== "done") bytes = this.step(bytes);
    if (bytes.length > 0) throw new Error("the store sent bytes after its answer's end");
  }

  /** Consumes what it can of `bytes` in the current state; returns the rest. */
  private step(bytes: Uint8Array): Uint8Array {
    const framing = this.framing;
    switch (framing.kind) {
      case "head":
        return this.readHead(bytes);
      case "length":
      case "chunk-data": {
        const taken = bytes.subarray(0, Math.min(framing.left, bytes.length));
        this.sink.body(taken);
        framing.left -= taken.length;
        if (framing.left === 0) {
          if (framing.kind === "length") this.finish();
          else this.framing = { kind: "chunk-end" };
        }
        return bytes.subarray(taken.length);
      }
      case "close":
        this.sink.body(bytes);
        return bytes.subarray(bytes.length);
      case "chunk-size":
      case "chunk-end":
      case "trailers":
        return this.readLine(bytes, framing.kind);
      default:
        return bytes;
    }
  }

  private readHead(bytes: Uint8Array): Uint8Array {
    const joined = this.join(bytes);
    const end = Buffer.from(joined.buffer, joined.byteOffset, joined.length).indexOf(CRLF_CRLF);
    if (end < 0) {
      if (joined.length > MAX_HEAD_BYTES) throw new Error("the store's answer has a head over 64 KiB");
      this.pending = joined.slice();
      return bytes.subarray(bytes.length);
    }
    this.pending = new Uint8Array(0);
    const head = parseHead(Buffer.from(joined.buffer, joined.byteOffset, end).toString("latin1"));
    const rest = joined.subarray(end + 4);
    if (head.status >= 100 && head.status < 200) return rest;
    const framing = this.framingOf(head);
    head.bodyless = framing.kind === "done";
    this.framing = framing;
    this.sink.head(head);
    if (framing.kind === "done" || (framing.kind === "length" && framing.left === 0)) this.finish();
    return rest;
  }

  private framingOf(head: ResponseHead): Framing {
    if (this.bodyless || head.status === 204 || head.status === 304) return { kind: "done" };
    const encoding = lastValue(head, "transfer-encoding")?.toLowerCase();
    if (encoding !== undefined) {
      if (encoding.split(",").at(-1)?.trim() !== "chunked")
        throw new Error(`the store's answer is encoded ${encoding}`);
      return { kind: "chunk-size" };
    }
    const length = lastValue(head, "content-length");
    if (length === undefined) {
      head.reusable = false;
      return { kind: "close" };
    }
    if (!/^\d+$/.test(length)) throw new Error(`the store's answer has Content-Length ${length}`);
    return { kind: "length", left: Number(length) };
  }

  /** A line of the chunked framing: a chunk's size, the CRLF after its data, a trailer or the last empty line. */
  private readLine(bytes: Uint8Array, kind: "chunk-size" | "chunk-end" | "trailers"): Uint8Array {
    const joined = this.join(bytes);
    const lf = joined.indexOf(10);
    if (lf < 0) {
      if (joined.length > MAX_HEAD_BYTES) throw new Error("the store's chunked answer has a line over 64 KiB");
      this.pending = joined.slice();
      return bytes.subarray(bytes.length);
    }
    this.pending = new Uint8Array(0);
    const line = Buffer.from(joined.buffer, joined.byteOffset, lf).toString("latin1").replace(/\r$/, "");
    if (kind === "chunk-end") {
      if (line !== "") throw new Error("the store's chunked answer has no line end after a chunk");
      this.framing = { kind: "chunk-size" };
    } else if (kind === "trailers") {
      if (line === "") this.finish();
    } else {
      const size = /^([0-9a-fA-F]{1,12})(?:[ \t]*;.*)?[ \t]*$/.exec(line)?.[1];
      if (size === undefined) throw new Error("the store's chunked answer has a malformed chunk size");
      const left = Number.parseInt(size, 16);
      this.framing = left === 0 ? { kind: "trailers" } : { kind: "chunk-data", left };
    }
    return joined.subarray(lf + 1);
  }

  /** `bytes` after what was pending, copied only when something was pending. */
  private join(bytes: Uint8Array): Uint8Array {
    if (this.pending.length === 0) return bytes;
    const joined = new Uint8Array(this.pending.length + bytes.length);
    joined.set(this.pending);
    joined.set(bytes, this.pending.length);
    return joined;
  }

  private finish(): void {
    this.framing = { kind: "done" };
    this.sink.end();
  }
}

function parseHead(text: string): ResponseHead {
  const lines = text.split("\r\n");
  const status = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0] ?? "");
  if (!status) throw new Error("the store's answer does not start with an HTTP/1.x status line");
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new Error("the store's answer has a malformed header line");
    headers.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
  }
  const connection = headers
    .filter(([name]) => name === "connection")
    .map(([, value]) => value.toLowerCase())
    .join(",");
  const head: ResponseHead = {
    status: Number(status[2]),
    statusText: status[3] ?? "",
    headers,
    // HTTP/1.0 connections are not kept: a store that old is not worth the edge cases.
    reusable: status[1] === "1" && !/(^|,)\s*close\s*(,|$)/.test(connection),
    bodyless: false,
  };
  return head;
}

function lastValue(head: ResponseHead, name: string): string | undefined {
  return head.headers.findLast(([n]) => n === name)?.[1];
}
