/**
 * A call that arrives after `initialize` (roots declared) but before
 * `notifications/initialized` is held until the client's roots are known,
 * and then checked against them, not against --allowed-dir alone.
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { tempDir } from "../helpers/files.ts";
import { requireBinary } from "../helpers/mcp.ts";
import { freshBucket, s3Env } from "../helpers/s3.ts";

/** A line-by-line JSON-RPC peer on the binary's stdio. */
function peer(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([requireBinary(), ...args], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    env: { PATH: process.env.PATH ?? "/usr/bin", HOME: process.env.HOME ?? "/root", ...env },
  });
  const queue: Record<string, any>[] = [];
  let wake: (() => void) | undefined;
  void (async () => {
    let buffer = "";
    for await (const chunk of proc.stdout) {
      buffer += new TextDecoder().decode(chunk);
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        queue.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
        wake?.();
      }
    }
  })();
  return {
    send: (m: object) => proc.stdin.write(`${JSON.stringify(m)}\n`),
    /** The next message matching `pred`, or undefined after `ms`. */
    async next(pred: (m: Record<string, any>) => boolean, ms = 5_000): Promise<Record<string, any> | undefined> {
      const end = Date.now() + ms;
      for (;;) {
        const i = queue.findIndex(pred);
        if (i >= 0) return queue.splice(i, 1)[0];
        if (Date.now() >= end) return undefined;
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        });
      }
    },
    stop: () => {
      proc.stdin.end();
      return proc.exited;
    },
  };
}

test("a local call before notifications/initialized waits for the roots and is checked against them", async () => {
  const base = tempDir("roots-order");
  mkdirSync(join(base, "shared"));
  writeFileSync(join(base, "private.txt"), "not shared by the client");
  const bucket = await freshBucket("rootsorder");
  const p = peer(["--allowed-dir", base], s3Env());
  try {
    p.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: { roots: { listChanged: true } },
        clientInfo: { name: "t", version: "1" },
      },
    });
    expect(await p.next((m) => m.id === 1)).toBeDefined();
    p.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: {
        name: "upload_file",
        arguments: { local_file_path: join(base, "private.txt"), bucket_name: bucket, object_key: "leak" },
      },
    });
    // Not answered on a guess while the roots are unknown.
    expect(await p.next((m) => m.id === 2, 500)).toBeUndefined();
    p.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const ask = await p.next((m) => m.method === "roots/list");
    expect(ask).toBeDefined();
    p.send({ jsonrpc: "2.0", id: ask!.id, result: { roots: [{ uri: pathToFileURL(join(base, "shared")).href }] } });
    const answer = await p.next((m) => m.id === 2);
    expect(answer?.result?.isError).toBe(true);
    expect(JSON.stringify(answer)).toContain("LocalPathNotAllowed");
  } finally {
    await p.stop();
  }
});
