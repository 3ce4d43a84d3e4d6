/**
 * A user-space model of a wide-area network on loopback: a TCP proxy that
 * delivers every chunk `delayMs` after it arrived, each way, and holds at most
 * `windowBytes` undelivered per connection and direction (reading pauses
 * until the backlog drains). With 10 ms and 512 KiB one connection carries
 * about what a single TCP stream gets across a 20 ms round trip, so running
 * several requests at once pays off as it does on the internet, where on bare
 * loopback it cannot show. Every client under test goes through the same proxy.
 */
import { connect, createServer, type Socket } from "node:net";

export interface WanModel {
  delayMs: number;
  windowBytes: number;
}

export const DEFAULT_WAN: WanModel = { delayMs: 10, windowBytes: 512 * 1024 };

export interface WanProxy {
  endpoint: string;
  model: WanModel;
  stop(): Promise<void>;
}

function pipeDelayed(from: Socket, to: Socket, model: WanModel): void {
  let held = 0;
  /** When the last piece scheduled so far is delivered: the end goes after it. */
  let lastDue = 0;
  from.on("data", (chunk: Buffer) => {
    held += chunk.length;
    if (held >= model.windowBytes) from.pause();
    // A chunk larger than the window goes a window at a time, one delay apart: the link carries at most windowBytes
    // per delayMs whatever size the socket's reads come in (they differ between machines and kernels).
    for (let at = 0, n = 1; at < chunk.length; at += model.windowBytes, n++) {
      const piece = chunk.subarray(at, at + model.windowBytes);
      lastDue = Math.max(lastDue, performance.now() + model.delayMs * n);
      setTimeout(() => {
        if (to.destroyed) return;
        to.write(piece, () => {
          held -= piece.length;
          if (held < model.windowBytes && from.isPaused()) from.resume();
        });
      }, model.delayMs * n);
    }
  });
  from.on("end", () => setTimeout(() => to.end(), Math.max(model.delayMs, lastDue - performance.now() + 1)));
}

export async function startWanProxy(target: string, model: WanModel = DEFAULT_WAN): Promise<WanProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const server = connect(Number(upstream.port), upstream.hostname);
    for (const s of [client, server]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        server.destroy();
      });
    }
    pipeDelayed(client, server, model);
    pipeDelayed(server, client, model);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    model,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
