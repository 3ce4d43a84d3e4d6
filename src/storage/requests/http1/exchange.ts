/**
 * A GET or HEAD without a body, sent on a kept HTTP/1.1 connection
 * (connections.ts) and answered as fetch answers: a Response whose body
 * streams as the bytes arrive, the socket paused while the reader is more
 * than BUFFERED_BYTES behind. It exists for CPU: Bun's fetch spends about
 * a third more CPU than this per byte received (docs/performance.md).
 *
 * As fetch does: the abort signal rejects the promise (before the head) or
 * errors the body (after), with the signal's reason; a network failure
 * rejects with an error carrying its code; redirects are not followed; a
 * gzip body is not inflated (none is asked for). Unlike fetch, a request on
 * a kept connection that the store had closed meanwhile (nothing came back)
 * is sent once more on a new one, as browsers and Node's agents do for an
 * idempotent request.
 */

import { type Connection, connectionTo, failure, keep, type Origin, type Receiver } from "./connections.ts";
import { type ResponseHead, ResponseReader } from "./response-reader.ts";

/** What a body may hold unread before the socket is paused. */
const BUFFERED_BYTES = 1024 * 1024;

export interface BareRequest {
  method: "GET" | "HEAD";
  url: URL;
  /** Sent as given, after Host (taken from the URL, as signed). */
  headers: Iterable<[string, string]>;
  signal?: AbortSignal | null;
}

export async function http1Fetch(request: BareRequest): Promise<Response> {
  const origin = originOf(request.url);
  const head = encodeRequest(request);
  for (let attempt = 1; ; attempt++) {
    // An abort before the exchange listens for it (before a first attempt, between two) ends it here.
    request.signal?.throwIfAborted();
    const got = connectionTo(origin);
    const { connection, kept } =
      "connection" in got ? got : { connection: await connected(got, request.signal), kept: false };
    try {
      return await new Exchange(connection, request, head).answer;
    } catch (error) {
      // A kept connection the store closed while it was idle: nothing was answered, so it is safe to ask again.
      if (!(kept && error instanceof StaleConnection && attempt === 1))
        throw error instanceof StaleConnection ? error.cause : error;
    }
  }
}

class StaleConnection extends Error {}

/** The connection being opened, or the signal's reason as soon as it aborts (one that opens after that is closed). */
function connected(opening: Promise<Connection>, signal: AbortSignal | null | undefined): Promise<Connection> {
  if (!signal) return opening;
  return new Promise((resolve, reject) => {
    const abort = () => {
      reject(signal.reason);
      opening.then(
        (connection) => connection.destroy(),
        () => {},
      );
    };
    signal.addEventListener("abort", abort, { once: true });
    opening.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** One request and its answer on one connection. */
class Exchange implements Receiver {
  readonly answer: Promise<Response>;
  private resolve!: (response: Response) => void;
  private reject!: (error: unknown) => void;
  private readonly reader: ResponseReader;
  private body: ReadableStreamDefaultController<Uint8Array> | undefined;
  private reusable = false;
  /** Whether any byte of an answer came. */
  private heard = false;
  /** Whether the answer ended or failed: from then on nothing more is done. */
  private settled = false;
  private readonly onAbort = () => this.fail(this.request.signal?.reason ?? failure("ABORT_ERR", "aborted"));

  constructor(
    private readonly connection: Connection,
    private readonly request: BareRequest,
    head: Uint8Array,
  ) {
    this.answer = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.reader = new ResponseReader(
      { head: (h) => this.onHead(h), body: (b) => this.onBody(b), end: () => this.onEnd() },
      request.method === "HEAD",
    );
    request.signal?.addEventListener("abort", this.onAbort, { once: true });
    connection.receiver = this;
    connection.write(head);
  }

  received(bytes: Uint8Array): void {
    this.heard = true;
    try {
      this.reader.feed(bytes);
    } catch (error) {
      this.fail(failure("EPROTO", (error as Error).message));
      // Also when the answer had already ended (bytes past its end): fail() then does nothing, and the connection
      // must not carry another request.
      this.connection.destroy();
      return;
    }
    // Kept only once every byte fed was framed: a store that sends more than its answer is not asked again.
    if (this.reader.done) {
      if (this.reusable) keep(this.connection);
      else this.connection.destroy();
    }
  }

  ended(error: Error | undefined): void {
    if (this.settled) return;
    if (!this.reader.midway) {
      // A body that runs to the close ends here.
      this.reader.closed();
      return;
    }
    const cause = error ?? failure("ECONNRESET", "the store closed the connection before its answer ended");
    this.fail(!this.heard && this.connection.carried > 0 ? new StaleConnection("stale", { cause }) : cause);
  }

  private onHead(head: ResponseHead): void {
    this.reusable = head.reusable;
    const body = head.bodyless
      ? null
      : new ReadableStream<Uint8Array>(
          {
            start: (controller) => {
              this.body = controller;
            },
            pull: () => this.connection.resume(),
            cancel: () => this.fail(failure("ABORT_ERR", "the body was cancelled")),
          },
          { highWaterMark: BUFFERED_BYTES, size: (chunk) => chunk?.byteLength ?? 0 },
        );
    this.resolve(new Response(body, { status: head.status, statusText: head.statusText, headers: head.headers }));
  }

  private onBody(bytes: Uint8Array): void {
    const body = this.body;
    if (!body) return;
    // A view of part of what the socket gave (the rest was the head, a chunk's framing) is copied into a buffer of
    // its own: the reader detaches each chunk once written (runtime/memory.ts), freeing it now; a view would keep
    // the whole buffer until a collection.
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    body.enqueue(whole ? bytes : bytes.slice());
    if ((body.desiredSize ?? 1) <= 0) this.connection.pause();
  }

  private onEnd(): void {
    if (this.settled) return;
    this.settled = true;
    this.request.signal?.removeEventListener("abort", this.onAbort);
    this.body?.close();
  }

  /** Ends the exchange with `error`: the answer rejected, or its body errored; the connection is closed. */
  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.request.signal?.removeEventListener("abort", this.onAbort);
    this.connection.receiver = undefined;
    this.connection.destroy();
    this.reject(error);
    try {
      this.body?.error(error);
    } catch {
      // Already closed by its reader.
    }
  }
}

function originOf(url: URL): Origin {
  const tls = url.protocol === "https:";
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = url.port ? Number(url.port) : tls ? 443 : 80;
  return { key: `${url.protocol}//${url.host}`, hostname, port, tls };
}

/** The request's head: its line, Host as the URL gives it (as it was signed), the headers given. */
function encodeRequest(request: BareRequest): Uint8Array {
  let text = `${request.method} ${request.url.pathname}${request.url.search} HTTP/1.1\r\nhost: ${request.url.host}\r\n`;
  for (const [name, value] of request.headers) {
    if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) throw new TypeError(`header ${name} has a line break`);
    if (name.toLowerCase() === "host") continue;
    text += `${name}: ${value}\r\n`;
  }
  return Buffer.from(`${text}\r\n`, "latin1");
}
