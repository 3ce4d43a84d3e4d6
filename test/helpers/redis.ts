/**
 * A real Redis for the shared-state tests: Debian's redis-server, on a free
 * loopback port, with a password, nothing saved to disk; stopped and
 * started again on the same port to test a state store that goes away.
 */

import { existsSync } from "node:fs";
import { freePort } from "../../scripts/s3/local-servers.ts";
import { tracked } from "./processes.ts";

export const REDIS_SERVER = "/usr/bin/redis-server";

export interface Redis {
  url: string;
  password: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startRedis(password = `redis-pass-${Math.random().toString(36).slice(2, 12)}`): Promise<Redis> {
  if (!existsSync(REDIS_SERVER))
    throw new Error(`${REDIS_SERVER} is missing: bash scripts/provision.sh test installs redis-server`);
  const port = freePort();
  let proc: ReturnType<typeof Bun.spawn> | undefined;
  const start = async () => {
    proc = Bun.spawn(
      [
        REDIS_SERVER,
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--requirepass",
        password,
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "yes",
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    tracked(proc);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const up = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
        (s) => (s.end(), true),
        () => false,
      );
      if (up) return;
      if (Date.now() > deadline) throw new Error("redis-server did not start");
      await Bun.sleep(25);
    }
  };
  await start();
  return {
    url: `redis://:${encodeURIComponent(password)}@127.0.0.1:${port}/0`,
    password,
    start,
    stop: async () => {
      proc?.kill("SIGKILL");
      await proc?.exited;
    },
  };
}
