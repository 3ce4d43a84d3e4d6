/**
 * Traces of tool calls, exported as OTLP over HTTP (protobuf) to the
 * collector OpenTelemetry's standard variables name
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, their
 * _HEADERS; OTEL_TRACES_SAMPLER and _ARG; OTEL_BSP_*; OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES), loaded only when one is set.
 *
 * One span a request, named as OpenTelemetry's MCP conventions say
 * (`{mcp.method.name} {target}`: `tools/call {tool}`, `prompts/get {prompt}`,
 * else the method alone, never a resource's URI, which names keys; kind
 * server, mcp.method.name, gen_ai.tool.name and gen_ai.operation.name for a
 * call, jsonrpc.request.id, error.type = tool_error or the error's code), its
 * parent the caller's trace context: params._meta.traceparent/tracestate,
 * else the HTTP request's traceparent header. Each request to the store
 * made inside the call is a child (kind client: rpc.system aws-api,
 * rpc.method, aws.s3.bucket, http.response.status_code, the body sizes said,
 * http.request.resend_count), one per attempt, so a retry shows as a
 * sibling. No key name, token or secret is an attribute.
 * The call's span is carried with the call's own async work (an
 * AsyncLocalStorage), not through a global context manager.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Attributes, Context, Span, SpanContext } from "@opentelemetry/api";
import type { CallSpan, Telemetry, TraceParent } from "../../runtime/telemetry.ts";

export interface TracesOptions {
  serviceName: string;
  version: string;
  /** The environment the OTEL_* variables are read from. */
  env: Record<string, string | undefined>;
}

export type RunningTraces = Pick<Telemetry, "span" | "storeRequest" | "flush">;

export async function startTraces(options: TracesOptions): Promise<RunningTraces> {
  const [api, sdk, { OTLPTraceExporter }, core, { resourceFromAttributes, envDetector, detectResources }] =
    await Promise.all([
      import("@opentelemetry/api"),
      import("@opentelemetry/sdk-trace"),
      import("@opentelemetry/exporter-trace-otlp-proto"),
      import("@opentelemetry/core"),
      import("@opentelemetry/resources"),
    ]);
  const resource = resourceFromAttributes({
    "service.name": options.serviceName,
    "service.version": options.version,
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new sdk.TracerProvider({
    resource,
    sampler: samplerFrom(options.env, sdk),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batchFrom(options.env) })],
  });
  const tracer = provider.getTracer("store-mcp-server", options.version);
  const current = new AsyncLocalStorage<Span>();

  const parentContext = (parent: TraceParent | undefined): Context => {
    const remote = parent && core.parseTraceParent(parent.traceparent);
    if (!remote) return api.ROOT_CONTEXT;
    const spanContext: SpanContext = {
      ...remote,
      isRemote: true,
      ...(parent.tracestate ? { traceState: new core.TraceState(parent.tracestate) } : {}),
    };
    return api.trace.setSpanContext(api.ROOT_CONTEXT, spanContext);
  };

  return {
    span(method, target, requestId, parent): CallSpan {
      const attributes: Attributes = {
        "mcp.method.name": method,
        ...(method === "tools/call" && target
          ? { "gen_ai.tool.name": target, "gen_ai.operation.name": "execute_tool" }
          : {}),
        ...(method === "prompts/get" && target ? { "gen_ai.prompt.name": target } : {}),
        ...(requestId !== undefined ? { "jsonrpc.request.id": String(requestId) } : {}),
      };
      const span = tracer.startSpan(
        target ? `${method} ${target}` : method,
        { kind: api.SpanKind.SERVER, attributes },
        parentContext(parent),
      );
      let ended = false;
      return {
        run: (work) => current.run(span, work),
        end(errorType) {
          if (ended) return;
          ended = true;
          if (errorType) {
            span.setAttribute("error.type", errorType);
            span.setStatus({ code: api.SpanStatusCode.ERROR });
          }
          span.end();
        },
      };
    },
    storeRequest(operation, status, seconds, detail = {}) {
      const parent = current.getStore();
      if (!parent) return; // outside a call (the readiness probe, a start-up check): no trace to belong to
      const endTime = performance.timeOrigin + performance.now();
      const span = tracer.startSpan(
        `S3.${operation}`,
        {
          kind: api.SpanKind.CLIENT,
          startTime: endTime - seconds * 1000,
          attributes: {
            "rpc.system": "aws-api",
            "rpc.service": "S3",
            "rpc.method": operation,
            ...(detail.bucket ? { "aws.s3.bucket": detail.bucket } : {}),
            ...(status > 0 ? { "http.response.status_code": status } : {}),
            ...(detail.attempt ? { "http.request.resend_count": detail.attempt - 1 } : {}),
            ...(detail.sentBytes !== undefined ? { "http.request.body.size": detail.sentBytes } : {}),
            ...(detail.receivedBytes !== undefined ? { "http.response.body.size": detail.receivedBytes } : {}),
          },
        },
        api.trace.setSpan(api.ROOT_CONTEXT, parent),
      );
      if (status === 0 || status >= 400) {
        span.setAttribute("error.type", status > 0 ? String(status) : "no_answer");
        span.setStatus({ code: api.SpanStatusCode.ERROR });
      }
      span.end(endTime);
    },
    flush: () => provider.forceFlush(),
  };
}

/** OTEL_TRACES_SAMPLER (and _ARG) as the specification names them; default parentbased_always_on. */
function samplerFrom(env: Record<string, string | undefined>, sdk: typeof import("@opentelemetry/sdk-trace")) {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || "parentbased_always_on";
  const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG ?? 1);
  const root = name.endsWith("always_off")
    ? new sdk.AlwaysOffSampler()
    : name.endsWith("traceidratio")
      ? new sdk.TraceIdRatioBasedSampler(Number.isFinite(ratio) ? ratio : 1)
      : new sdk.AlwaysOnSampler();
  return name.startsWith("parentbased_") ? new sdk.ParentBasedSampler({ root }) : root;
}

/** OTEL_BSP_SCHEDULE_DELAY, _EXPORT_TIMEOUT, _MAX_QUEUE_SIZE, _MAX_EXPORT_BATCH_SIZE: the batch's settings (the SDK reads none). */
function batchFrom(env: Record<string, string | undefined>) {
  const positive = (name: string) => {
    const n = Number(env[name]?.trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  };
  const settings = {
    scheduledDelayMillis: positive("OTEL_BSP_SCHEDULE_DELAY"),
    exportTimeoutMillis: positive("OTEL_BSP_EXPORT_TIMEOUT"),
    maxQueueSize: positive("OTEL_BSP_MAX_QUEUE_SIZE"),
    maxExportBatchSize: positive("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
  };
  return Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
}
