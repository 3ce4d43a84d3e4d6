/**
 * The operator's metrics, scraped by a real Prometheus (Debian's) from the
 * compiled binary in remote mode with STORE_METRICS_LISTEN, and read back
 * through Prometheus's query API as a dashboard reads them: calls by tool
 * with the MCP conventions' error.type, bytes by tool and direction, store
 * requests by operation and status, refusals by reason, the gauges. The
 * endpoint carries no key name, bucket name or token; off, the port is
 * closed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { freePort } from "../../scripts/s3/local-servers.ts";
import { connectHttp, type HttpBinary, rpc, startHttpBinary } from "../helpers/http.ts";
import { type Prometheus, startPrometheus } from "../helpers/prometheus.ts";
import { freshBucket, s3Env } from "../helpers/s3.ts";
import { waitFor } from "../helpers/wait.ts";

const TOKEN = "metrics-token-0123456789abcdef";
const KEY = "private/payroll-2026-key-name.csv";
const BODY = "name,amount\nalice,1\n";
let server: HttpBinary;
let prometheus: Prometheus;
let metricsAt: string;
let bucket: string;

beforeAll(async () => {
  bucket = await freshBucket("metrics");
  const port = freePort();
  metricsAt = `127.0.0.1:${port}`;
  server = await startHttpBinary({
    env: {
      ...s3Env(),
      STORE_HTTP_TOKENS: `ci:${TOKEN}`,
      STORE_METRICS_LISTEN: metricsAt,
      OTEL_SERVICE_NAME: "store-mcp-metrics-test",
      // Low enough that a burst is refused: the rate-limit refusals are counted.
      STORE_CALLER_RATE: "20",
      STORE_CALLER_BURST: "20",
    },
  });
  prometheus = await startPrometheus(metricsAt);
}, 60_000);

afterAll(async () => {
  await prometheus?.stop();
  await server?.stop();
});

/** The value of each series of `promql` once Prometheus has scraped what the calls did. */
async function scraped(promql: string, ready: (values: number[]) => boolean) {
  let series: Awaited<ReturnType<Prometheus["query"]>> = [];
  await waitFor(
    `Prometheus to scrape ${promql}`,
    async () => {
      series = await prometheus.query(promql);
      return ready(series.map((s) => s.value));
    },
    30_000,
    250,
  );
  return series;
}

test("calls, bytes, store requests, refusals and gauges reach Prometheus, named as the MCP conventions say", async () => {
  const client = await connectHttp(server.url, TOKEN);
  try {
    const put = await client.callTool({
      name: "put_object",
      arguments: { bucket_name: bucket, object_key: KEY, content: BODY },
    });
    expect(put.isError).toBeFalsy();
    const read = await client.callTool({ name: "get_object", arguments: { bucket_name: bucket, object_key: KEY } });
    expect(read.isError).toBeFalsy();
    const missing = await client.callTool({
      name: "get_object",
      arguments: { bucket_name: bucket, object_key: "no/such/key.txt" },
    });
    expect(missing.isError).toBe(true);
  } finally {
    await client.close();
  }
  // A burst over the caller's rate: some are answered 429.
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      rpc(server.url, { jsonrpc: "2.0", id: i, method: "tools/list" }, { authorization: `Bearer ${TOKEN}` }),
    ),
  );
  expect(answers.some((a) => a.status === 429)).toBe(true);

  const calls = await scraped(
    'mcp_server_operation_duration_count{mcp_method_name="tools/call"}',
    (v) => v.length >= 3,
  );
  const byTool = (tool: string, failed: boolean) =>
    calls.find((s) => s.metric.gen_ai_tool_name === tool && (s.metric.error_type === "tool_error") === failed)?.value;
  expect(byTool("put_object", false)).toBe(1);
  expect(byTool("get_object", false)).toBe(1);
  expect(byTool("get_object", true)).toBe(1);
  expect(calls.every((s) => s.metric.job === "store-mcp-server")).toBe(true);

  const bytes = await scraped("store_mcp_transfer_size_total", (v) => v.length >= 2);
  const moved = (tool: string, direction: string) =>
    bytes.find((s) => s.metric.gen_ai_tool_name === tool && s.metric.store_mcp_direction === direction)?.value;
  expect(moved("put_object", "upload")).toBe(BODY.length);
  expect(moved("get_object", "download")).toBe(BODY.length);

  const requests = await scraped("store_mcp_store_request_duration_count", (v) => v.length >= 2);
  const status = (operation: string) =>
    requests
      .filter((s) => s.metric.store_mcp_store_operation === operation)
      .map((s) => s.metric.http_response_status_code);
  expect(status("PutObject")).toContain("200");
  // The missing key: the store's 404, an error type on the series.
  const notFound = requests.filter((s) => s.metric.http_response_status_code === "404");
  expect(notFound.length).toBeGreaterThan(0);
  expect(notFound.every((s) => s.metric.error_type === "404")).toBe(true);

  const refusals = await scraped('store_mcp_refusals_total{store_mcp_refusal_reason="rate_limit"}', (v) => v[0]! >= 1);
  expect(refusals[0]!.value).toBe(answers.filter((a) => a.status === 429).length);

  const gauges = await scraped('{__name__=~"store_mcp_memory_budget_used|store_mcp_jobs_running"}', (v) => {
    return v.length === 2;
  });
  expect(gauges.map((g) => g.value)).toEqual([0, 0]);
  const info = await scraped("target_info", (v) => v.length === 1);
  expect(info[0]!.metric.service_name).toBe("store-mcp-metrics-test");
  expect(await prometheus.targetHealth()).toBe("up");

  // What a scraper sees carries no caller's data: no key, no bucket, no token.
  const text = await (await fetch(`http://${metricsAt}/metrics`)).text();
  for (const secret of [KEY, "payroll", bucket, TOKEN]) expect(text).not.toContain(secret);
  // Only /metrics is served there.
  expect((await fetch(`http://${metricsAt}/mcp`)).status).toBe(404);
}, 90_000);

/** The TCP ports a process listens on (ss, from iproute2). */
function listeningPorts(pid: number): number[] {
  const out = Bun.spawnSync(["ss", "-ltnpH"]).stdout.toString();
  return out
    .split("\n")
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => Number(line.split(/\s+/)[3]!.split(":").pop()))
    .sort((a, b) => a - b);
}

test("without STORE_METRICS_LISTEN the server listens on its MCP port alone; with it, on the metrics port too", async () => {
  const plain = await startHttpBinary({ env: { ...s3Env(), STORE_HTTP_TOKENS: `ci:${TOKEN}` } });
  try {
    expect(listeningPorts(plain.proc.pid)).toEqual([plain.port]);
    expect(plain.stderr()).not.toContain("metrics");
  } finally {
    await plain.stop();
  }
  expect(listeningPorts(server.proc.pid)).toEqual([server.port, Number(metricsAt.split(":")[1])].sort((a, b) => a - b));
});

test("an address that cannot be listened on stops the start, naming the setting", async () => {
  const taken = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  try {
    await expect(
      startHttpBinary({
        env: { ...s3Env(), STORE_HTTP_TOKENS: `ci:${TOKEN}`, STORE_METRICS_LISTEN: `127.0.0.1:${taken.port}` },
      }),
    ).rejects.toThrow(/STORE_METRICS_LISTEN 127\.0\.0\.1:\d+ cannot be listened on/);
  } finally {
    taken.stop(true);
  }
});
