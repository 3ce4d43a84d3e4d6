/**
 * The WAN model (scripts/bench/wan-proxy.ts) in front of the tests' stores and the bench must deliver every byte,
 * in order, whatever sizes the socket's reads come in and however they fall against its window.
 */
import { expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { connect, createServer, type Socket } from "node:net";
import { startWanProxy } from "../../../scripts/bench/wan-proxy.ts";

test("a stream larger than the window, sent at once, arrives whole and in order", async () => {
  const sent = randomBytes(4 * 1024 * 1024);
  const got: Buffer[] = [];
  let ended: () => void = () => {};
  const done = new Promise<void>((resolve) => (ended = resolve));
  const sink = createServer((s: Socket) => {
    s.on("data", (c: Buffer) => got.push(c));
    s.on("end", () => ended());
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  // A window that no socket read is a multiple of: most reads end in a piece smaller than the window.
  const proxy = await startWanProxy(`http://127.0.0.1:${(sink.address() as { port: number }).port}`, {
    delayMs: 2,
    windowBytes: 48 * 1024 + 7,
  });
  try {
    const client = connect(Number(new URL(proxy.endpoint).port), "127.0.0.1");
    await new Promise<void>((resolve) => client.once("connect", () => resolve()));
    client.end(sent);
    await done;
    const received = Buffer.concat(got);
    expect(received.length).toBe(sent.length);
    const md5 = (b: Buffer) => createHash("md5").update(b).digest("hex");
    expect(md5(received)).toBe(md5(sent));
  } finally {
    await proxy.stop();
    sink.close();
  }
}, 30_000);
