/**
 * A user-space model of a wide-area network on loopback: a TCP proxy that
 * delivers every chunk `delayMs` after it arrived (never before one that came
 * before it), each way, and holds at most
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
  // Pieces in the order they came, each with when it is due (never before the one ahead of it); `null` is the end.
  // One timer delivers them in that order: a timer per piece let two due within the same millisecond swap, and the
  // bytes arrived out of order (a store refused an upload's part for its Content-MD5).
  const queue: { due: number; piece: Buffer | null }[] = [];
  let _timer: ReturnType<typeof setTimeout> | undefined;
  const deliver = () => {
    _timer = undefined;
    while (queue.length > 0 && queue[0]!.due <= performance.now()) {
      const { piece } = queue.shift()!;
      if (to.destroyed) return;
      if (piece === null) {
        to.end();
        return;
      }
      to.write(piece, () => {
        held -= piece.length;
        if (held < model.windowBytes && from.isPaused()) from.resume();
      });
    }
    if (queue.length > 0) _timer = setTimeout(deliver, Math.max(0, queue[0]!.due - performance.now()));
  };
  const enqueue = (piece: Buffer | null, delay: number) => {
    const last = queue.at(-1)?.due ?? 0;
    queue.push({ due: Math.max(last, performance.now() + delay), piece });
    _timer ??= setTimeout(deliver, Math.max(0, queue[0]!.due - performance.now()));
  };
  from.on("data", (chunk: Buffer) => {
    held += chunk.length;
    if (held >= model.windowBytes) from.pause();
    // A chunk larger than the window goes a window at a time, one delay apart: the link carries at most windowBytes
    // per delayMs whatever size the socket's reads come in (they differ between machines and kernels).
    for (let at = 0, n = 1; at < chunk.length; at += model.windowBytes, n++)
      enqueue(chunk.subarray(at, at + model.windowBytes), model.delayMs * n);
  });
  from.on("end", () => enqueue(null, model.delayMs));
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
