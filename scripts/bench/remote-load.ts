/**
 * Remote mode under load: 100 concurrent clients × 20 calls (list_objects
 * and head_object in turn) against Ceph, through one HTTP server; then the
 * same 2,000 calls, 100 at a time, over one stdio connection. Over HTTP
 * twice: 2025 clients (the v1 SDK's: initialize, then a session's requests)
 * and 2026-07-28 clients (the v2 SDK's, pinned: per-request, no session).
 * Throughput, p50/p99 latency per call, the server's CPU per call and its
 * peak RSS for each.
 */

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { freePort } from "../s3/local-servers.ts";
import { namedProcessesCpuMs, ownCpuMs, procCpuMs, procMemoryMb } from "./measure.ts";
import { startServer } from "./server-session.ts";

export interface LoadFigures {
  callsPerS: number;
  p50Ms: number;
  p99Ms: number;
  peakMb: number;
  /** The server process's CPU (user + system) per call: what the transport costs the server, whatever the clients cost. */
  serverCpuMsPerCall: number;
  /** The clients' CPU per call (the bench's own process, where all 100 run): they share the machine's cores with the server. */
  clientCpuMsPerCall: number;
  /** The store's CPU per call (Ceph's daemons): the same work for both transports. */
  storeCpuMsPerCall: number;
}

export interface RemoteLoadFigures {
  clients: number;
  callsPerClient: number;
  http: LoadFigures;
  /** The same over HTTP with 2026-07-28 clients. */
  httpModern: LoadFigures;
  stdio: LoadFigures;
}

const CLIENTS = 100;
const CALLS = 20;
const TOKEN = "bench-token-0123456789abcdef";

type CallFn = (name: string, args: Record<string, unknown>) => Promise<{ isError?: boolean }>;

async function drive(callers: CallFn[], bucket: string, key: string): Promise<{ latencies: number[]; wallMs: number }> {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    callers.map(async (callTool) => {
      for (let i = 0; i < CALLS; i++) {
        const t = performance.now();
        const r = await (i % 2
          ? callTool("head_object", { bucket_name: bucket, object_key: key })
          : callTool("list_objects", { bucket_name: bucket, max_keys: 50 }));
        if (r.isError) throw new Error(`a load call failed: ${JSON.stringify(r).slice(0, 300)}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - started };
}

const STORE_DAEMONS = /^(radosgw|ceph-osd|ceph-mon)$/;

/** CPU used while `work` runs: by the server process, by this process (the clients), by the store. */
async function cpuDuring<T>(
  serverPid: number,
  work: () => Promise<T>,
): Promise<{ result: T; serverMs: number; clientMs: number; storeMs: number }> {
  const before = { server: procCpuMs(serverPid), client: ownCpuMs(), store: namedProcessesCpuMs(STORE_DAEMONS) };
  const result = await work();
  return {
    result,
    serverMs: procCpuMs(serverPid) - before.server,
    clientMs: ownCpuMs() - before.client,
    storeMs: namedProcessesCpuMs(STORE_DAEMONS) - before.store,
  };
}

function figures(
  run: { latencies: number[]; wallMs: number },
  peakMb: number,
  cpu: { serverMs: number; clientMs: number; storeMs: number },
): LoadFigures {
  const { latencies, wallMs } = run;
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const n = latencies.length;
  return {
    callsPerS: (n / wallMs) * 1000,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    peakMb,
    serverCpuMsPerCall: cpu.serverMs / n,
    clientCpuMsPerCall: cpu.clientMs / n,
    storeCpuMsPerCall: cpu.storeMs / n,
  };
}

export async function measureRemoteLoad(
  binary: string,
  serverEnv: Record<string, string>,
  dir: string,
  bucket: string,
  key: string,
): Promise<RemoteLoadFigures> {
  const port = freePort();
  const proc = Bun.spawn([binary, "--transport", "http", "--listen", `127.0.0.1:${port}`], {
    env: {
      PATH: process.env.PATH ?? "",
      ...serverEnv,
      STORE_HTTP_TOKENS: `bench:${TOKEN}`,
      STORE_CALLER_RATE: "off",
      STORE_CALLER_IN_FLIGHT: "off",
      STORE_LOG_LEVEL: "error",
      RUST_LOG: "error",
    },
    stdout: "ignore",
    stderr: "ignore",
  });
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  let http: LoadFigures;
  let httpModern: LoadFigures;
  try {
    while (
      !(await fetch(new URL("/healthz", url)).then(
        (r) => r.ok,
        () => false,
      ))
    )
      await Bun.sleep(20);
    const headers = { authorization: `Bearer ${TOKEN}` };
    // Steady state, as a deployment serves a team all day: one untimed round first (the JIT warms to this path), for every transport.
    const measure = async (
      connect: () => Promise<{
        callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
        close(): Promise<void>;
      }>,
    ) => {
      const clients = await Promise.all(Array.from({ length: CLIENTS }, connect));
      const callers = clients.map(
        (c) => (name: string, args: Record<string, unknown>) =>
          c.callTool({ name, arguments: args }) as Promise<{ isError?: boolean }>,
      );
      await drive(callers, bucket, key);
      const measured = await cpuDuring(proc.pid, () => drive(callers, bucket, key));
      await Promise.all(clients.map((c) => c.close()));
      return figures(measured.result, procMemoryMb(proc.pid, "VmHWM"), measured);
    };
    // 2025: the v1 SDK's client, each with its initialize.
    http = await measure(async () => {
      const client = new Client({ name: "bench-load", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
      return client;
    });
    // 2026-07-28: the v2 SDK's client, pinned (no probe): every request stands alone.
    httpModern = await measure(async () => {
      const client = new ModernClient(
        { name: "bench-load", version: "1" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } as never },
      );
      await client.connect(new ModernHttpTransport(url, { requestInit: { headers } }));
      return client;
    });
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }

  const server = await startServer(binary, { ...serverEnv, RUST_LOG: "error" }, dir);
  try {
    const callers = Array.from(
      { length: CLIENTS },
      () => (name: string, args: Record<string, unknown>) => server.call(name, args),
    );
    await drive(callers, bucket, key);
    const measured = await cpuDuring(server.pid, () => drive(callers, bucket, key));
    return {
      clients: CLIENTS,
      callsPerClient: CALLS,
      http,
      httpModern,
      stdio: figures(measured.result, procMemoryMb(server.pid, "VmHWM"), measured),
    };
  } finally {
    await server.close();
  }
}
