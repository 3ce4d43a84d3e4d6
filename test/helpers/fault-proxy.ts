/**
 * A TCP proxy between the server under test and the S3 server that misbehaves
 * on command: refuse connections, blackhole them, delay them, cut them after N
 * bytes in one direction, hold requests after N bytes until released, or
 * answer the next requests with an HTTP error. Every fault applies to
 * connections accepted after it is set; set() also drops the open ones, so a
 * keep-alive socket cannot slip past a new fault.
 */
import { connect, createServer, type Socket } from "node:net";

export type Fault =
  | { kind: "pass" }
  /** Accept, then reset at once. */
  | { kind: "refuse" }
  /** Accept, read everything, never answer. */
  | { kind: "blackhole" }
  /** Wait before connecting upstream. */
  | { kind: "delay"; ms: number }
  /** Forward, but drop the connection once `afterBytes` have gone this way (with `once`, only the first such connection). */
  | { kind: "cut"; direction: "request" | "response"; afterBytes: number; once?: boolean }
  /** Forward at most this many bytes a second each way, per connection (to keep a transfer in flight). */
  | { kind: "throttle"; bytesPerSecond: number }
  /** Forward, but hold each connection's request bytes after `afterBytes` until release(): a transfer kept in flight. */
  | { kind: "hold"; afterBytes: number }
  /** Answer the next `count` requests with this status and S3 error code, then pass. */
  | { kind: "http-error"; status: number; code: string; count: number };

export interface FaultProxy {
  endpoint: string;
  set(fault: Fault): void;
  /** Lets every held connection go on, and new ones pass, without dropping any. */
  release(): void;
  /** HTTP errors answered and connections cut so far. */
  stats: { errorsAnswered: number; cuts: number; connections: number };
  stop(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  let fault: Fault = { kind: "pass" };
  let errorsLeft = 0;
  let cutsAtSet = 0;
  const open = new Set<Socket>();
  const held: (() => void)[] = [];
  const stats = { errorsAnswered: 0, cuts: 0, connections: 0 };

  const server = createServer((client) => {
    stats.connections++;
    open.add(client);
    client.on("close", () => open.delete(client));
    client.on("error", () => {});
    const current = fault;
    switch (current.kind) {
      case "refuse":
        client.resetAndDestroy();
        return;
      case "blackhole":
        client.resume();
        return;
      case "http-error":
        if (errorsLeft > 0) {
          // Reserved at accept time, so concurrent connections never get more than `count` errors.
          errorsLeft--;
          answerWithError(client, current.status, current.code, () => stats.errorsAnswered++);
          return;
        }
        forward(client, undefined);
        return;
      case "delay":
        client.pause();
        setTimeout(() => forward(client, undefined), current.ms);
        return;
      case "cut":
      case "throttle":
      case "hold":
        forward(client, current);
        return;
      default:
        forward(client, undefined);
    }
  });

  function forward(client: Socket, fault: Extract<Fault, { kind: "cut" | "throttle" | "hold" }> | undefined): void {
    if (client.destroyed) return;
    const server = connect(Number(upstream.port), upstream.hostname);
    open.add(server);
    server.on("close", () => {
      open.delete(server);
      client.destroy();
    });
    server.on("error", () => client.destroy());
    client.on("close", () => server.destroy());
    // With `once`, the first connection to reach the limit is cut and the rest pass.
    const cut = fault?.kind === "cut" ? fault : undefined;
    const cutsAtStart = cutsAtSet;
    const armed = () => !(cut?.once && stats.cuts > cutsAtStart);
    const rate = fault?.kind === "throttle" ? fault.bytesPerSecond : Infinity;
    const hold = fault?.kind === "hold" ? fault.afterBytes : Infinity;
    pipe(client, server, { limit: cut?.direction === "request" ? cut.afterBytes : Infinity, armed, rate, hold });
    pipe(server, client, { limit: cut?.direction === "response" ? cut.afterBytes : Infinity, armed, rate });
    client.resume();
  }

  function pipe(
    from: Socket,
    to: Socket,
    { limit, armed, rate, hold = Infinity }: { limit: number; armed: () => boolean; rate: number; hold?: number },
  ): void {
    let sent = 0;
    let reached = false;
    from.on("data", (chunk: Buffer) => {
      if (hold !== Infinity && sent + chunk.length > hold && fault.kind === "hold") {
        const rest = chunk.subarray(Math.max(0, hold - sent));
        if (rest.length < chunk.length) forwardChunk(chunk.subarray(0, hold - sent));
        from.pause();
        held.push(() => {
          forwardChunk(rest);
          if (!from.destroyed) from.resume();
        });
        hold = Infinity;
        return;
      }
      if (!reached && sent + chunk.length >= limit) {
        reached = true;
        if (armed()) cut(chunk.subarray(0, limit - sent));
        else forwardChunk(chunk);
        return;
      }
      forwardChunk(chunk);
    });
    from.on("end", () => to.end());

    function cut(last: Buffer): void {
      stats.cuts++;
      from.pause();
      to.write(last, () => {
        from.destroy();
        to.destroy();
      });
    }
    function forwardChunk(chunk: Buffer): void {
      sent += chunk.length;
      const full = !to.write(chunk);
      if (full || rate !== Infinity) from.pause();
      const wait = rate === Infinity ? 0 : (chunk.length / rate) * 1000;
      const resume = () => setTimeout(() => from.resume(), wait);
      if (full) to.once("drain", resume);
      else if (rate !== Infinity) resume();
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stats,
    set(next) {
      fault = next;
      errorsLeft = next.kind === "http-error" ? next.count : 0;
      cutsAtSet = stats.cuts;
      for (const socket of open) socket.destroy();
    },
    release() {
      fault = { kind: "pass" };
      for (const go of held.splice(0)) go();
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Reads one request head, answers it with an S3-style XML error, and closes. */
function answerWithError(client: Socket, status: number, code: string, counted: () => void): void {
  let head = "";
  const onData = (chunk: Buffer) => {
    head += chunk.toString("latin1");
    if (!head.includes("\r\n\r\n")) return;
    client.off("data", onData);
    counted();
    const isHead = head.startsWith("HEAD ");
    const body = isHead
      ? ""
      : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>Injected by the fault proxy.</Message></Error>`;
    client.end(
      `HTTP/1.1 ${status} ${code}\r\nContent-Type: application/xml\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
  client.on("data", onData);
}
