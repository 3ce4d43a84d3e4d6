/**
 * An OTLP/HTTP receiver for the OTLP test: POST /v1/traces and /v1/metrics
 * bodies decoded as protobuf with OpenTelemetry's official definitions
 * (test/fixtures/otlp-proto, read by protobufjs), the spans and the metrics'
 * data points kept flat with their resource's attributes.
 */
import { join } from "node:path";
import protobuf from "protobufjs";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client (the protocol's SpanKind). */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error. */
  status: number;
  resource: Record<string, string | number | boolean>;
}

export interface ReceivedPoint {
  /** The metric's name, as sent (dots, not Prometheus's underscores). */
  name: string;
  unit: string;
  attributes: Record<string, string | number | boolean>;
  /** A sum's or gauge's value; a histogram's count. */
  value: number;
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  url: string;
  spans: ReceivedSpan[];
  points: ReceivedPoint[];
  /** Content types the exports came with. */
  contentTypes: string[];
  stop(): void;
}

const PROTO_ROOT = join(import.meta.dir, "../fixtures/otlp-proto");

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(PROTO_ROOT, target);
  await root.load(
    [
      "opentelemetry/proto/collector/trace/v1/trace_service.proto",
      "opentelemetry/proto/collector/metrics/v1/metrics_service.proto",
    ],
    { keepCase: false },
  );
  const request = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
  const response = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse");
  const metricsRequest = root.lookupType("opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest");
  const metricsResponse = root.lookupType("opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse");
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const contentTypes: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method === "POST" && path === "/v1/metrics") {
        contentTypes.push(req.headers.get("content-type") ?? "");
        const body = new Uint8Array(await req.arrayBuffer());
        points.push(...pointsOf(metricsRequest.toObject(metricsRequest.decode(body), { longs: String, oneofs: true })));
        return new Response(Buffer.from(metricsResponse.encode(metricsResponse.create({})).finish()), {
          headers: { "content-type": "application/x-protobuf" },
        });
      }
      if (req.method !== "POST" || path !== "/v1/traces") return new Response("", { status: 404 });
      contentTypes.push(req.headers.get("content-type") ?? "");
      const decoded = request.toObject(request.decode(new Uint8Array(await req.arrayBuffer())), {
        longs: String,
        bytes: String,
        oneofs: true,
      }) as {
        resourceSpans: {
          resource?: { attributes: KeyValue[] };
          scopeSpans: { spans: RawSpan[] }[];
        }[];
      };
      for (const rs of decoded.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes ?? []);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId ?? ""),
              name: s.name,
              kind: s.kind ?? 0,
              attributes: attributesOf(s.attributes ?? []),
              status: s.status?.code ?? 0,
              resource,
            });
      }
      return new Response(Buffer.from(response.encode(response.create({})).finish()), {
        headers: { "content-type": "application/x-protobuf" },
      });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, spans, points, contentTypes, stop: () => server.stop(true) };
}

interface KeyValue {
  key: string;
  /** `value` names the one field set (protobufjs, oneofs: true). */
  value: { value?: string; stringValue?: string; intValue?: string; boolValue?: boolean; doubleValue?: number };
}
interface RawSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: KeyValue[];
  status?: { code?: number };
}

/** protobufjs gives bytes as base64 (bytes: String). */
const hex = (base64: string) => Buffer.from(base64, "base64").toString("hex");

function attributesOf(list: KeyValue[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list) {
    if (value.value === "stringValue") out[key] = value.stringValue!;
    else if (value.value === "intValue") out[key] = Number(value.intValue);
    else if (value.value === "boolValue") out[key] = value.boolValue!;
    else if (value.value === "doubleValue") out[key] = value.doubleValue!;
  }
  return out;
}

interface RawPoint {
  attributes?: KeyValue[];
  asInt?: string;
  asDouble?: number;
  count?: string;
}
interface RawMetric {
  name: string;
  unit?: string;
  sum?: { dataPoints?: RawPoint[] };
  gauge?: { dataPoints?: RawPoint[] };
  histogram?: { dataPoints?: RawPoint[] };
}

/** Every data point of an export, flat. */
function pointsOf(decoded: {
  resourceMetrics?: { resource?: { attributes?: KeyValue[] }; scopeMetrics?: { metrics?: RawMetric[] }[] }[];
}): ReceivedPoint[] {
  const out: ReceivedPoint[] = [];
  for (const rm of decoded.resourceMetrics ?? []) {
    const resource = attributesOf(rm.resource?.attributes ?? []);
    for (const sm of rm.scopeMetrics ?? [])
      for (const m of sm.metrics ?? []) {
        const data = m.sum ?? m.gauge ?? m.histogram;
        for (const p of data?.dataPoints ?? [])
          out.push({
            name: m.name,
            unit: m.unit ?? "",
            attributes: attributesOf(p.attributes ?? []),
            value: m.histogram ? Number(p.count ?? 0) : Number(p.asInt ?? p.asDouble ?? 0),
            resource,
          });
      }
  }
  return out;
}
