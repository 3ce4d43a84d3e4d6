/**
 * A real Prometheus for the metrics test: Debian's prometheus, on a free
 * loopback port, scraping one target every second, its data in a temp dir;
 * queried through its HTTP API as a dashboard would.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../scripts/s3/local-servers.ts";
import { tracked } from "./processes.ts";
import { waitFor } from "./wait.ts";

export const PROMETHEUS = "/usr/bin/prometheus";

export interface Prometheus {
  url: string;
  /** The instant vector's samples for a PromQL query: each series' labels and value. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** The scrape target's health as Prometheus sees it ("up", "down", "unknown"). */
  targetHealth(): Promise<string | undefined>;
  stop(): Promise<void>;
}

export async function startPrometheus(target: string): Promise<Prometheus> {
  if (!existsSync(PROMETHEUS))
    throw new Error(`${PROMETHEUS} is missing: bash scripts/provision.sh test installs Debian's prometheus`);
  const dir = mkdtempSync(join(tmpdir(), "prometheus-"));
  const config = join(dir, "prometheus.yml");
  writeFileSync(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 900ms",
      "scrape_configs:",
      "  - job_name: store-mcp-server",
      "    static_configs:",
      `      - targets: ["${target}"]`,
      "",
    ].join("\n"),
  );
  const port = freePort();
  const proc = tracked(
    Bun.spawn(
      [
        PROMETHEUS,
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      { stdout: "ignore", stderr: "pipe" },
    ),
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    "Prometheus to be ready",
    async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200,
    30_000,
    100,
  );
  return {
    url,
    async query(promql) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as {
        status: string;
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== "success") throw new Error(`query ${promql}: ${JSON.stringify(body)}`);
      return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async targetHealth() {
      const res = await fetch(`${url}/api/v1/targets`);
      const body = (await res.json()) as { data: { activeTargets: { health: string }[] } };
      return body.data.activeTargets[0]?.health;
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
