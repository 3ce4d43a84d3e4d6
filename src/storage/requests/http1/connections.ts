/**
 * Kept HTTP/1.1 connections to a store, by origin: opened with Bun.connect
 * (TLS verified as fetch verifies it: the system's CAs and
 * NODE_EXTRA_CA_CERTS, the certificate's names against the host), handed to
 * one exchange at a time (exchange.ts), kept when its answer was read to the
 * end and the store did not say close, closed after IDLE_SECONDS unused. A
 * kept connection does not hold the process open.
 */

import type { Socket, SocketHandler } from "bun";

/** A kept connection unused this long is closed (stores close theirs after 5-60 s; a request on one they closed first is sent again). */
const IDLE_SECONDS = 4;
/** Kept connections per origin: a bulk job runs up to 64 requests at once. */
const KEPT_PER_ORIGIN = 96;

export interface Origin {
  /** protocol//host:port, the pool's key. */
  key: string;
  hostname: string;
  port: number;
  tls: boolean;
}

/** What a connection tells the exchange it carries. */
export interface Receiver {
  received(bytes: Uint8Array): void;
  /** The connection is gone: closed by the store (no error) or failed. */
  ended(error: Error | undefined): void;
}

export class Connection {
  receiver: Receiver | undefined;
  /** Requests sent on it before the current one: a kept connection the store closed meanwhile fails before any answer. */
  carried = 0;
  private socket: Socket<Connection> | undefined;
  private gone = false;
  private paused = false;
  /** What a write could not take yet (a request head is small: nearly always nothing). */
  private unsent: Uint8Array | undefined;
  /** Until ready: how the connecting promise is settled. */
  settle: ((error?: Error) => void) | undefined;

  constructor(readonly origin: Origin) {}

  attach(socket: Socket<Connection>): void {
    this.socket = socket;
  }

  get open(): boolean {
    return !this.gone && this.socket !== undefined;
  }

  /** Writes all of `bytes`, the rest when the socket drains. */
  write(bytes: Uint8Array): void {
    const socket = this.socket;
    if (!socket || this.gone) return;
    const written = socket.write(bytes);
    this.unsent = written < bytes.length ? bytes.subarray(Math.max(written, 0)) : undefined;
  }

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket?.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.socket?.resume();
  }

  /** Closes it at once (an answer not read to its end leaves the connection unusable). */
  destroy(): void {
    if (this.gone) return;
    this.gone = true;
    this.socket?.terminate();
  }

  onDrain(): void {
    if (this.unsent) this.write(this.unsent);
  }

  onEnd(error: Error | undefined): void {
    if (this.gone && !this.receiver && !this.settle) return;
    this.gone = true;
    dropIdle(this);
    if (this.settle) {
      this.settle(error ?? failure("ECONNRESET", "the store closed the connection before it was ready"));
      this.settle = undefined;
    }
    const receiver = this.receiver;
    this.receiver = undefined;
    receiver?.ended(error);
    this.socket?.terminate();
  }

  /** In use: it keeps the process alive and is timed by its exchange, not the idle clock. */
  lend(): void {
    this.socket?.ref();
    this.socket?.timeout(0);
  }

  /** Idle: closed after IDLE_SECONDS, holding nothing open. */
  rest(): void {
    this.socket?.unref();
    this.socket?.timeout(IDLE_SECONDS);
  }
}

const idle = new Map<string, Connection[]>();

/** A kept connection to `origin` if one is idle, else a new one (rejects as the connection failed: refused, TLS…). */
export function connectionTo(origin: Origin): { connection: Connection; kept: boolean } | Promise<Connection> {
  const kept = idle.get(origin.key)?.pop();
  if (kept?.open) {
    kept.lend();
    return { connection: kept, kept: true };
  }
  return openConnection(origin);
}

/** Gives a connection whose answer was read to the end back for the next request. */
export function keep(connection: Connection): void {
  connection.receiver = undefined;
  // Paused for the last answer's reader (its body's buffer full with its last bytes): the next answer must be read.
  connection.resume();
  connection.carried++;
  const list = idle.get(connection.origin.key) ?? [];
  if (!connection.open || list.length >= KEPT_PER_ORIGIN) {
    connection.destroy();
    return;
  }
  connection.rest();
  list.push(connection);
  idle.set(connection.origin.key, list);
}

function dropIdle(connection: Connection): void {
  const list = idle.get(connection.origin.key);
  const at = list?.indexOf(connection) ?? -1;
  if (list && at >= 0) list.splice(at, 1);
}

function openConnection(origin: Origin): Promise<Connection> {
  const connection = new Connection(origin);
  return new Promise<Connection>((resolve, reject) => {
    connection.settle = (error) => (error ? reject(error) : resolve(connection));
    Bun.connect<Connection>({
      hostname: origin.hostname,
      port: origin.port,
      data: connection,
      // The handlers take Uint8Arrays (binaryType), which the types of connect do not carry through.
      socket: (origin.tls ? TLS_HANDLERS : PLAIN_HANDLERS) as unknown as SocketHandler<Connection>,
      ...(origin.tls ? { tls: isIp(origin.hostname) ? true : { serverName: origin.hostname } } : {}),
    }).then(
      (socket) => connection.attach(socket),
      (error: Error) => connection.onEnd(error),
    );
  });
}

function ready(socket: Socket<Connection>): void {
  const connection = socket.data;
  connection.attach(socket);
  socket.setNoDelay(true);
  connection.lend();
  const settle = connection.settle;
  connection.settle = undefined;
  settle?.();
}

const COMMON: SocketHandler<Connection, "uint8array"> = {
  binaryType: "uint8array",
  data: (socket, bytes) => {
    const connection = socket.data;
    // Bytes on an idle connection answer nothing asked: it can no longer be trusted to frame the next answer.
    if (connection.receiver) connection.receiver.received(bytes);
    else connection.onEnd(undefined);
  },
  drain: (socket) => socket.data.onDrain(),
  end: (socket) => socket.data.onEnd(undefined),
  close: (socket, error) => socket.data.onEnd(error),
  error: (socket, error) => socket.data.onEnd(error),
  connectError: (socket, error) => socket.data.onEnd(error),
  timeout: (socket) => socket.data.onEnd(failure("ETIMEDOUT", "the connection to the store timed out")),
};

const PLAIN_HANDLERS: SocketHandler<Connection, "uint8array"> = { ...COMMON, open: ready };

const TLS_HANDLERS: SocketHandler<Connection, "uint8array"> = {
  ...COMMON,
  // The request waits for the handshake: written before it, it was lost.
  handshake: (socket, authorized, error) => {
    if (authorized) ready(socket);
    else socket.data.onEnd(error ?? failure("UNABLE_TO_VERIFY_LEAF_SIGNATURE", "the store's certificate was refused"));
  },
};

/** An error as Node's and Bun's network errors are: a message and a code (errors.ts and the SDK's retries read it). */
export function failure(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function isIp(hostname: string): boolean {
  return /^[\d.]+$/.test(hostname) || hostname.includes(":");
}
