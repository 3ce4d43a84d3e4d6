/**
 * query_objects' cost beyond its work (the look bench, results-look.md): the first query of a server, which starts
 * its worker and loads the engine, and the later ones over a 22-byte CSV, optionally against another build.
 */

import { median } from "./measure.ts";
import { QUERY_BUCKET } from "./query.ts";
import { startServer } from "./server-session.ts";
import { type Network, type Store, serverEnv } from "./transfers.ts";

export interface LatencyRow {
  build: string;
  firstMs: number;
  laterMs: number;
  laterSpread: [number, number];
}

const LATER = 12;

/**
 * What a query costs beyond its work: the first query of a server (its worker started, the engine loaded) and the
 * later ones (each in a worker of its own, started while the one before ran), over a 22-byte CSV on loopback. With
 * `against`, the same for another build, alternating server starts.
 */
export async function measureQueryLatency(
  builds: { name: string; binary: string }[],
  store: Store,
  net: Network,
  work: string,
): Promise<LatencyRow[]> {
  const per = new Map(builds.map((b) => [b.name, { first: [] as number[], later: [] as number[] }]));
  for (let round = 0; round < 3; round++) {
    for (const build of builds) {
      const server = await startServer(build.binary, serverEnv(store, net), work);
      try {
        const times: number[] = [];
        for (let i = 0; i <= LATER; i++) {
          const started = performance.now();
          await server.call("query_objects", {
            bucket_name: QUERY_BUCKET,
            keys: ["tiny.csv"],
            sql: "SELECT count(*) AS n, max(b) FROM objects",
          });
          times.push(performance.now() - started);
        }
        per.get(build.name)!.first.push(times[0]!);
        per.get(build.name)!.later.push(...times.slice(1));
      } finally {
        await server.close();
      }
    }
  }
  return builds.map((b) => {
    const { first, later } = per.get(b.name)!;
    const sorted = [...later].sort((x, y) => x - y);
    return {
      build: b.name,
      firstMs: median(first),
      laterMs: median(later),
      laterSpread: [sorted[Math.floor(sorted.length * 0.1)]!, sorted[Math.floor(sorted.length * 0.9)]!],
    };
  });
}

export function latencyReport(rows: LatencyRow[]): string {
  return [
    "",
    "## query_objects: what a query costs beyond its work (a 22-byte CSV, loopback)",
    "",
    `The first query of a server, and the median (10th-90th percentile) of the ${LATER} after it, over 3 server starts. Each query runs in a worker process (docs/security.md, "Queries"): the first starts one, later ones reuse it.`,
    "",
    "| build | first query | later queries |",
    "|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.build} | ${Math.round(r.firstMs)} ms | ${Math.round(r.laterMs)} ms (${Math.round(r.laterSpread[0])}-${Math.round(r.laterSpread[1])}) |`,
    ),
    "",
  ].join("\n");
}
