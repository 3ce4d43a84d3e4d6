/**
 * The load a team puts on one remote deployment (issue #27, part 5):
 * 1,000 people at once, each with a token of their own, opening a session
 * and making 5 calls (errors, p50/p99, the server's peak RSS); and two
 * replicas behind nginx under 100 clients × 20 calls with one replica sent
 * SIGTERM in the middle (calls that failed: the target is none). The
 * per-caller limits stay at their defaults: each person is one caller.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startNginx } from "../../test/helpers/nginx.ts";
import { startRedis } from "../../test/helpers/redis.ts";
import { freePort } from "../s3/local-servers.ts";
import { procCpuMs, procMemoryMb } from "./measure.ts";
import type { RemoteLoadFigures } from "./remote-load.ts";

export interface CrowdFigures {
  clients: number;
  callsEach: number;
  errors: number;
  firstError: string | null;
  p50Ms: number;
  p99Ms: number;
  wallMs: number;
  peakMb: number;
}

/** The crowd through two replicas behind nginx, without and with the state store (--state-url: limits and jobs shared). */
export interface ReplicatedCrowdFigures {
  without: CrowdFigures & { cpuMsPerCall: number };
  with: CrowdFigures & { cpuMsPerCall: number };
}

export interface FailoverFigures {
  calls: number;
  failed: number;
  firstFailure: string | null;
  servedByStopped: number;
  wallMs: number;
}

const tokenOf = (i: number) => `person-${i}-token-0123456789abcdef`;

async function startReplica(
  binary: string,
  env: Record<string, string>,
  tokens: string,
): Promise<{ port: number; proc: ReturnType<typeof Bun.spawn>; served(): number }> {
  const port = freePort();
  const proc = Bun.spawn([binary, "--transport", "http", "--listen", `127.0.0.1:${port}`], {
    env: { PATH: process.env.PATH ?? "", ...env, STORE_HTTP_TOKENS: tokens, RUST_LOG: "info" },
    stdout: "ignore",
    stderr: "pipe",
  });
  let log = "";
  void (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) log += new TextDecoder().decode(chunk);
  })();
  while (
    !(await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  )
    await Bun.sleep(20);
  return { port, proc, served: () => (log.match(/"tools\/call /g) ?? []).length };
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "bench-person", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

/** `clients` people at once, each: initialize, then `callsEach` calls, then close. */
export async function measureCrowd(
  binary: string,
  env: Record<string, string>,
  bucket: string,
  key: string,
  clients = 1000,
  callsEach = 5,
): Promise<CrowdFigures> {
  const tokens = Array.from({ length: clients }, (_, i) => `p${i}:${tokenOf(i)}`).join(",");
  const replica = await startReplica(binary, env, tokens);
  try {
    const crowd = await crowdThrough(`http://127.0.0.1:${replica.port}/mcp`, bucket, key, clients, callsEach);
    return { ...crowd, peakMb: procMemoryMb(replica.proc.pid!, "VmHWM") };
  } finally {
    replica.proc.kill("SIGTERM");
    await replica.proc.exited;
  }
}

/** `clients` people at once through two replicas behind nginx, first each replica on its own, then sharing a redis-server. */
export async function measureReplicatedCrowd(
  binary: string,
  env: Record<string, string>,
  bucket: string,
  key: string,
  clients = 1000,
  callsEach = 5,
): Promise<ReplicatedCrowdFigures> {
  const redis = await startRedis();
  try {
    const run = async (extra: Record<string, string>) => {
      const tokens = Array.from({ length: clients }, (_, i) => `p${i}:${tokenOf(i)}`).join(",");
      const replicas = await Promise.all([
        startReplica(binary, { ...env, ...extra }, tokens),
        startReplica(binary, { ...env, ...extra }, tokens),
      ]);
      const proxy = await startNginx(replicas.map((r) => r.port));
      const cpuBefore = replicas.reduce((sum, r) => sum + procCpuMs(r.proc.pid!), 0);
      try {
        const crowd = await crowdThrough(proxy.url, bucket, key, clients, callsEach);
        const cpuMs = replicas.reduce((sum, r) => sum + procCpuMs(r.proc.pid!), 0) - cpuBefore;
        // Peak of the busier replica: the target is per replica.
        const peakMb = Math.max(...replicas.map((r) => procMemoryMb(r.proc.pid!, "VmHWM")));
        return { ...crowd, peakMb, cpuMsPerCall: cpuMs / (clients * (callsEach + 1)) };
      } finally {
        await proxy.stop();
        for (const r of replicas) r.proc.kill("SIGTERM");
        await Promise.all(replicas.map((r) => r.proc.exited));
      }
    };
    const without = await run({});
    return { without, with: await run({ STORE_STATE_URL: redis.url }) };
  } finally {
    await redis.stop();
  }
}

/** The crowd's calls against one URL: errors, latencies, wall time (peak memory is the caller's to read). */
async function crowdThrough(
  url: string,
  bucket: string,
  key: string,
  clients: number,
  callsEach: number,
): Promise<CrowdFigures> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      try {
        const client = await connect(url, tokenOf(i));
        for (let c = 0; c < callsEach; c++) {
          const t = performance.now();
          const r = await client.callTool({
            name: c % 2 ? "head_object" : "list_objects",
            arguments: c % 2 ? { bucket_name: bucket, object_key: key } : { bucket_name: bucket, max_keys: 20 },
          });
          latencies.push(performance.now() - t);
          if (r.isError) {
            errors++;
            firstError ??= JSON.stringify(r.content).slice(0, 200);
          }
        }
        await client.close();
      } catch (err) {
        errors++;
        firstError ??= String(err).slice(0, 200);
      }
    }),
  );
  const sorted = latencies.sort((a, b) => a - b);
  return {
    clients,
    callsEach,
    errors,
    firstError,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    wallMs: performance.now() - started,
    peakMb: 0,
  };
}

/** Two replicas behind nginx; `clients` × `callsEach` calls through it; one replica gets SIGTERM once a third of them are done. */
export async function measureFailover(
  binary: string,
  env: Record<string, string>,
  bucket: string,
  key: string,
  clients = 100,
  callsEach = 20,
): Promise<FailoverFigures> {
  const tokens = Array.from({ length: clients }, (_, i) => `p${i}:${tokenOf(i)}`).join(",");
  const replicas = await Promise.all([startReplica(binary, env, tokens), startReplica(binary, env, tokens)]);
  const proxy = await startNginx(replicas.map((r) => r.port));
  let done = 0;
  let failed = 0;
  let firstFailure: string | null = null;
  let servedByStopped = 0;
  const total = clients * callsEach;
  const started = performance.now();
  try {
    const people = await Promise.all(Array.from({ length: clients }, (_, i) => connect(proxy.url, tokenOf(i))));
    await Promise.all(
      people.map(async (client) => {
        for (let c = 0; c < callsEach; c++) {
          try {
            const r = await client.callTool({
              name: c % 2 ? "head_object" : "list_objects",
              arguments: c % 2 ? { bucket_name: bucket, object_key: key } : { bucket_name: bucket, max_keys: 20 },
            });
            if (r.isError) {
              failed++;
              firstFailure ??= JSON.stringify(r.content).slice(0, 200);
            }
          } catch (err) {
            failed++;
            firstFailure ??= String(err).slice(0, 200);
          }
          if (++done === Math.floor(total / 3)) {
            servedByStopped = replicas[0]!.served();
            replicas[0]!.proc.kill("SIGTERM");
          }
        }
      }),
    );
    await Promise.all(people.map((p) => p.close().catch(() => {})));
    return { calls: total, failed, firstFailure, servedByStopped, wallMs: performance.now() - started };
  } finally {
    await proxy.stop();
    for (const r of replicas) r.proc.kill("SIGKILL");
  }
}

const r1 = (n: number) => Math.round(n * 10) / 10;

/** results-team.md: the three figures and their targets. */
export function teamReport(
  load: RemoteLoadFigures,
  crowd: CrowdFigures,
  failover: FailoverFigures,
  replicated: ReplicatedCrowdFigures,
  machine: string,
): string {
  const shared = replicated.with;
  const extraCpu = shared.cpuMsPerCall - replicated.without.cpuMsPerCall;
  const ratio = load.http.callsPerS / load.stdio.callsPerS;
  return [
    "# A team's load on one deployment: results",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}; Ceph RGW on loopback, the clients in the bench's own process (they share the two cores with the server and Ceph). One run per figure.`,
    "",
    "| figure | measured | target | met |",
    "|---|---|---|---|",
    `| ${load.clients} clients × ${load.callsPerClient} calls over HTTP (after one untimed round, as for stdio: the steady state) | ${Math.round(load.http.callsPerS)} calls/s, p50 ${Math.round(load.http.p50Ms)} ms, p99 ${Math.round(load.http.p99Ms)} ms, peak ${Math.round(load.http.peakMb)} MB | | |`,
    `| the same calls over one stdio connection | ${Math.round(load.stdio.callsPerS)} calls/s, p50 ${Math.round(load.stdio.p50Ms)} ms, p99 ${Math.round(load.stdio.p99Ms)} ms | | |`,
    `| HTTP ÷ stdio throughput | ${ratio.toFixed(2)}× | ≥ 1.0× | ${ratio >= 1 ? "yes" : "**no**"} |`,
    `| the same calls over HTTP from 2026-07-28 clients (per request, no session) | ${Math.round(load.httpModern.callsPerS)} calls/s, p50 ${Math.round(load.httpModern.p50Ms)} ms, p99 ${Math.round(load.httpModern.p99Ms)} ms | | |`,
    `| the server's CPU per call, HTTP 2025 / HTTP 2026-07-28 / stdio | ${load.http.serverCpuMsPerCall.toFixed(2)} / ${load.httpModern.serverCpuMsPerCall.toFixed(2)} / ${load.stdio.serverCpuMsPerCall.toFixed(2)} ms | | |`,
    ...(["http", "httpModern"] as const).map((k) => {
      const cpu = load[k].serverCpuMsPerCall / load.stdio.serverCpuMsPerCall;
      return `| the server's CPU per call, HTTP ${k === "http" ? "2025" : "2026-07-28"} ÷ stdio | ${cpu.toFixed(2)}× | ≤ 1.3× | ${cpu <= 1.3 ? "yes" : "**no**"} |`;
    }),
    `| the clients' CPU per call (all in the bench's process), HTTP / stdio | ${load.http.clientCpuMsPerCall.toFixed(2)} / ${load.stdio.clientCpuMsPerCall.toFixed(2)} ms | | |`,
    `| Ceph's CPU per call, HTTP / stdio | ${load.http.storeCpuMsPerCall.toFixed(2)} / ${load.stdio.storeCpuMsPerCall.toFixed(2)} ms | | |`,
    `| HTTP p99 ÷ p50 | ${r1(load.http.p99Ms / load.http.p50Ms)}× | ≤ 3× | ${load.http.p99Ms <= 3 * load.http.p50Ms ? "yes" : "**no**"} |`,
    `| ${crowd.clients.toLocaleString("en-US")} people at once (own token each), session + ${crowd.callsEach} calls | ${crowd.errors} errors${crowd.firstError ? ` (first: ${crowd.firstError})` : ""}, p50 ${Math.round(crowd.p50Ms)} ms, p99 ${Math.round(crowd.p99Ms)} ms, ${r1(crowd.wallMs / 1000)} s in all, peak ${Math.round(crowd.peakMb)} MB | 0 errors, ≤ 300 MB | ${crowd.errors === 0 && crowd.peakMb <= 300 ? "yes" : "**no**"} |`,
    `| ${shared.clients.toLocaleString("en-US")} people at once through two replicas behind nginx sharing a redis-server (--state-url: limits and jobs) | ${shared.errors} errors${shared.firstError ? ` (first: ${shared.firstError})` : ""}, p50 ${Math.round(shared.p50Ms)} ms, p99 ${Math.round(shared.p99Ms)} ms, ${r1(shared.wallMs / 1000)} s in all, peak ${Math.round(shared.peakMb)} MB (the busier replica) | 0 errors, ≤ 300 MB a replica | ${shared.errors === 0 && shared.peakMb <= 300 ? "yes" : "**no**"} |`,
    `| the replicas' CPU per request (initialize and calls), with the state store / without | ${shared.cpuMsPerCall.toFixed(2)} / ${replicated.without.cpuMsPerCall.toFixed(2)} ms (${extraCpu >= 0 ? "+" : ""}${extraCpu.toFixed(2)} ms; without: ${replicated.without.errors} errors, p99 ${Math.round(replicated.without.p99Ms)} ms) | ≤ +0.1 ms | ${extraCpu <= 0.1 ? "yes" : "**no**"} |`,
    `| two replicas behind nginx, ${failover.calls.toLocaleString("en-US")} calls, one SIGTERM'd after a third (it had served ${failover.servedByStopped}) | ${failover.failed} failed${failover.firstFailure ? ` (first: ${failover.firstFailure})` : ""} | 0 | ${failover.failed === 0 ? "yes" : "**no**"} |`,
    "",
  ].join("\n");
}
