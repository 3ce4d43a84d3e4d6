/**
 * Starts and stops the local S3 servers used by the tests, the demo and the
 * bench: Ceph RGW (a real S3 implementation: versions, ranges, error codes)
 * and fauxqs (an in-memory emulator from npm that starts in under a second).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export interface S3Server {
  name: string;
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** A second user of the same store, with buckets of its own (Ceph RGW only). */
  other?: { accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
}

const root = resolve(import.meta.dir, "../..");

export function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** A throwaway single-node Ceph cluster with RGW on loopback (~12 s); `sts`: with RGW's STS on (ceph-rgw.sh). */
export async function startCephRgw(attempts = 4, options: { sts?: boolean } = {}): Promise<S3Server> {
  const script = join(root, "scripts/s3/ceph-rgw.sh");
  let dir = "";
  let up: ReturnType<typeof Bun.spawnSync> | undefined;
  // A fresh cluster occasionally fails to form on a loaded machine: try again from scratch.
  for (let attempt = 1; attempt <= attempts; attempt++) {
    dir = mkdtempSync(join(tmpdir(), "store-mcp-ceph-"));
    up = Bun.spawnSync(["bash", script, "up", dir, String(freePort())], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, ...(options.sts ? { CEPH_STS: "1" } : {}) },
    });
    if (up.exitCode === 0) break;
    process.stderr.write(`ceph-rgw: attempt ${attempt} failed: ${up.stderr?.toString().trim().slice(-500)}\n`);
    Bun.spawnSync(["bash", script, "down", dir]);
    await Bun.sleep(1000);
  }
  if (!up?.success) {
    throw new Error(
      `Ceph RGW did not start (exit ${up?.exitCode}): ${up?.stderr?.toString().trim().slice(-2000)}\n` +
        "Provision it with: bash scripts/provision.sh test   (installs Debian's radosgw, ceph-mon and ceph-osd)",
    );
  }
  const vars = Object.fromEntries(
    (up.stdout ?? "")
      .toString()
      .trim()
      .split("\n")
      .map((line) => line.split(/=(.*)/s, 2) as [string, string]),
  );
  return {
    name: "ceph-rgw",
    endpoint: vars.STORE_ENDPOINT_URL!,
    accessKeyId: vars.STORE_ACCESS_KEY_ID!,
    secretAccessKey: vars.STORE_SECRET_ACCESS_KEY!,
    region: vars.STORE_REGION!,
    other: { accessKeyId: vars.OTHER_ACCESS_KEY_ID!, secretAccessKey: vars.OTHER_SECRET_ACCESS_KEY! },
    stop: async () => {
      Bun.spawnSync(["bash", script, "down", dir]);
    },
  };
}

/** fauxqs, the in-memory S3 emulator from npm (~0.5 s). */
export async function startFauxqs(): Promise<S3Server> {
  const port = freePort();
  const cli = join(root, "node_modules/fauxqs/dist/cli.js");
  const proc = Bun.spawn([process.execPath, cli], {
    env: { ...process.env, FAUXQS_PORT: String(port), FAUXQS_HOST: "127.0.0.1" },
    stdout: "ignore",
    stderr: "pipe",
  });
  const endpoint = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) break;
    const ok = await fetch(endpoint, { signal: AbortSignal.timeout(500) }).then(
      () => true,
      () => false,
    );
    if (ok) {
      return {
        name: "fauxqs",
        endpoint,
        accessKeyId: "demo-access-key",
        secretAccessKey: "demo-secret-key-not-secret",
        region: "us-east-1",
        stop: async () => {
          proc.kill();
          await proc.exited;
        },
      };
    }
    await Bun.sleep(100);
  }
  proc.kill();
  throw new Error(`fauxqs did not start: ${await new Response(proc.stderr).text()}\nRun: bun install`);
}
