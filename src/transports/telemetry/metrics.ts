/**
 * The metrics behind runtime/telemetry.ts, on OpenTelemetry's SDK, loaded
 * only when the operator asks for them: a Prometheus text endpoint,
 * `/metrics`, on its own listen address (STORE_METRICS_LISTEN), and/or OTLP
 * over HTTP (protobuf) pushed to the endpoint OpenTelemetry's variables name.
 *
 * Why its own address and no auth: a scraper holds no MCP token, and the
 * MCP port is the one exposed to callers; metrics belong on the pod network
 * (Kubernetes scrapes a pod's metrics port), as with every exporter. What
 * they carry is no caller's data (runtime/telemetry.ts says what may be
 * recorded), but bind it where only the scraper reaches (the default is
 * loopback).
 *
 * Names and attributes follow OpenTelemetry's semantic conventions for MCP
 * where they name the thing (mcp.server.operation.duration with
 * mcp.method.name, gen_ai.tool.name, error.type); the rest are this
 * server's own, under store_mcp.*. Prometheus writes dots as underscores and
 * adds the unit (mcp_server_operation_duration_seconds).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Attributes } from "@opentelemetry/api";
import type { Direction, Refusal, Telemetry, WatchedFigure } from "../../runtime/telemetry.ts";

export interface MetricsOptions {
  /** host:port of the Prometheus endpoint; absent: none. */
  listen?: { host: string; port: number };
  /** Push to the OTLP endpoint OpenTelemetry's variables name (OTEL_EXPORTER_OTLP_(METRICS_)ENDPOINT), every `otlpEveryMs`. */
  otlp?: { everyMs: number };
  /** The service's name (OTEL_SERVICE_NAME) and version, on every series (target_info). */
  serviceName: string;
  version: string;
}

export interface RunningMetrics extends Omit<Telemetry, "span" | "flush" | "enabled"> {
  /** Where /metrics is served (the port chosen when the listen address asked for 0); absent without a listen address. */
  url?: string;
  /** Pushes what is not yet pushed (OTLP) before the exit. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Bucket bounds, in seconds, for durations from a quick request (~1 ms) to a long transfer (minutes). */
const DURATION_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

const WATCHED: Record<WatchedFigure, { name: string; description: string; unit: string }> = {
  "jobs.running": { name: "store_mcp.jobs.running", description: "Jobs and tasks running", unit: "{job}" },
  "query.slots.used": {
    name: "store_mcp.query.slots.used",
    description: "Query slots held by running queries",
    unit: "{slot}",
  },
  "memory.budget.used": {
    name: "store_mcp.memory.budget.used",
    description: "Bytes of the memory budget that calls in flight hold",
    unit: "By",
  },
};

export async function startMetrics(options: MetricsOptions): Promise<RunningMetrics> {
  const [sdk, { resourceFromAttributes, detectResources, envDetector }] = await Promise.all([
    import("@opentelemetry/sdk-metrics"),
    import("@opentelemetry/resources"),
  ]);
  const readers: import("@opentelemetry/sdk-metrics").IMetricReader[] = [];
  let server: Server | undefined;
  if (options.listen) {
    const { PrometheusExporter } = await import("@opentelemetry/exporter-prometheus");
    const exporter = new PrometheusExporter({ preventServerStart: true });
    server = await serveMetrics(options.listen, (req, res) => exporter.getMetricsRequestHandler(req, res));
    readers.push(exporter);
  }
  if (options.otlp) {
    const { OTLPMetricExporter } = await import("@opentelemetry/exporter-metrics-otlp-proto");
    readers.push(
      new sdk.PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter(),
        exportIntervalMillis: options.otlp.everyMs,
        exportTimeoutMillis: Math.min(options.otlp.everyMs, 30_000),
      }),
    );
  }
  // OTEL_RESOURCE_ATTRIBUTES on every series too (target_info), as on every span.
  const resource = resourceFromAttributes({
    "service.name": options.serviceName,
    "service.version": options.version,
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new sdk.MeterProvider({ resource, readers });
  const meter = provider.getMeter("store-mcp-server", options.version);
  const operations = meter.createHistogram("mcp.server.operation.duration", {
    description: "MCP requests handled, by method and tool",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_BOUNDS },
  });
  const bytes = meter.createCounter("store_mcp.transfer.size", {
    description: "Bytes tool calls moved, by tool and direction",
    unit: "By",
  });
  const storeRequests = meter.createHistogram("store_mcp.store.request.duration", {
    description: "Requests to the store, by S3 operation and HTTP status",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_BOUNDS },
  });
  const refusals = meter.createCounter("store_mcp.refusals", {
    description: "Calls turned away before they ran, by reason",
    unit: "{call}",
  });
  const watched = new Map<WatchedFigure, (() => number)[]>();
  return {
    ...(server && options.listen ? { url: urlOf(server, options.listen) } : {}),
    operation(method, tool, seconds, errorType) {
      const attributes: Attributes = { "mcp.method.name": method };
      if (tool) attributes["gen_ai.tool.name"] = tool;
      if (errorType) attributes["error.type"] = errorType;
      operations.record(seconds, attributes);
    },
    transferred(tool: string, direction: Direction, n: number) {
      if (n > 0) bytes.add(n, { "gen_ai.tool.name": tool, "store_mcp.direction": direction });
    },
    storeRequest(operation, status, seconds) {
      storeRequests.record(seconds, {
        "store_mcp.store.operation": operation,
        ...(status > 0 ? { "http.response.status_code": status } : {}),
        ...(status === 0 || status >= 400 ? { "error.type": status > 0 ? String(status) : "no_answer" } : {}),
      });
    },
    refused(reason: Refusal) {
      refusals.add(1, { "store_mcp.refusal.reason": reason });
    },
    watch(figure, read) {
      // One gauge a figure, the sum of whatever reads it (one registry a process, or one a store).
      let readers = watched.get(figure);
      if (!readers) {
        const list: (() => number)[] = [];
        watched.set(figure, list);
        readers = list;
        const { name, description, unit } = WATCHED[figure];
        meter
          .createObservableGauge(name, { description, unit })
          .addCallback((result) => result.observe(list.reduce((sum, r) => sum + r(), 0)));
      }
      readers.push(read);
    },
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    },
  };
}

function urlOf(server: Server, listen: { host: string; port: number }): string {
  const bound = server.address();
  const port = typeof bound === "object" && bound ? bound.port : listen.port;
  const host = listen.host.includes(":") ? `[${listen.host}]` : listen.host;
  return `http://${host}:${port}/metrics`;
}

/** GET /metrics and nothing else, on its own address. */
function serveMetrics(
  listen: { host: string; port: number },
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path === "/metrics" && (req.method === "GET" || req.method === "HEAD")) return handle(req, res);
    res.statusCode = 404;
    res.end();
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}
