/**
 * Traces and metrics from the compiled binary, exported as OTLP/HTTP
 * (protobuf) to a receiver that decodes them with OpenTelemetry's official
 * definitions. Metrics: the same instruments Prometheus scrapes
 * (metrics.test.ts), pushed. Traces: a
 * tools/call is a server span named and attributed as the MCP conventions
 * say, its parent the caller's trace context (params._meta.traceparent over
 * stdio, the traceparent header over HTTP), each store request a client
 * span beneath it; a failed call is a tool_error; no key name is an
 * attribute. (Without an endpoint no OpenTelemetry module loads at all:
 * test/unit/lazy-loading.test.ts.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { GetPromptResultSchema, ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectHttp, startHttpBinary } from "../helpers/http.ts";
import { connectBinary } from "../helpers/mcp.ts";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.ts";
import { freshBucket, s3Env } from "../helpers/s3.ts";
import { waitFor } from "../helpers/wait.ts";

const KEY = "secret-plans/q3-key-name.txt";
const TOKEN = "traces-token-0123456789abcdef";
let receiver: OtlpReceiver;
let bucket: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  bucket = await freshBucket("traces");
});
afterAll(() => receiver?.stop());

const otel = () => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_SERVICE_NAME: "store-mcp-traces-test",
  OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=ci",
  // Export within a tenth of a second instead of five.
  OTEL_BSP_SCHEDULE_DELAY: "100",
});

/** A caller's trace context: a fresh trace id and the caller's own span id. */
function callerContext() {
  const traceId = crypto.getRandomValues(new Uint8Array(16)).toHex();
  const spanId = crypto.getRandomValues(new Uint8Array(8)).toHex();
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01`, tracestate: "vendor=abc" };
}

/** The spans of `traceId`, once `count` have arrived. */
async function trace(traceId: string, count: number): Promise<ReceivedSpan[]> {
  const of = () => receiver.spans.filter((s) => s.traceId === traceId);
  await waitFor(`${count} spans of trace ${traceId}`, () => of().length >= count, 20_000, 50);
  return of();
}

test("over stdio: the call's span takes its parent from params._meta, and the store requests are its children", async () => {
  const { client, close } = await connectBinary({ env: { ...s3Env(), ...otel() } });
  const ok = callerContext();
  const failed = callerContext();
  try {
    const put = await client.callTool({
      name: "put_object",
      arguments: { bucket_name: bucket, object_key: KEY, content: "hello" },
      _meta: { traceparent: ok.traceparent, tracestate: ok.tracestate },
    });
    expect(put.isError).toBeFalsy();
    const missing = await client.callTool({
      name: "get_object",
      arguments: { bucket_name: bucket, object_key: "no/such/key" },
      _meta: { traceparent: failed.traceparent },
    });
    expect(missing.isError).toBe(true);
  } finally {
    await close();
  }
  const spans = await trace(ok.traceId, 2);
  const call = spans.find((s) => s.name === "tools/call put_object")!;
  expect(call).toBeDefined();
  expect(call.parentSpanId).toBe(ok.spanId);
  expect(call.kind).toBe(2); // server
  expect(call.attributes).toMatchObject({
    "mcp.method.name": "tools/call",
    "gen_ai.tool.name": "put_object",
    "gen_ai.operation.name": "execute_tool",
  });
  expect(call.status).not.toBe(2);
  expect(call.resource).toMatchObject({
    "service.name": "store-mcp-traces-test",
    "deployment.environment.name": "ci",
  });
  const store = spans.filter((s) => s.parentSpanId === call.spanId);
  expect(store.map((s) => s.name)).toContain("S3.PutObject");
  const put = store.find((s) => s.name === "S3.PutObject")!;
  expect(put.kind).toBe(3); // client
  expect(put.attributes).toMatchObject({
    "rpc.system": "aws-api",
    "rpc.method": "PutObject",
    "aws.s3.bucket": bucket,
    "http.response.status_code": 200,
    "http.request.body.size": 5,
  });

  const failure = await trace(failed.traceId, 2);
  const failedCall = failure.find((s) => s.name === "tools/call get_object")!;
  expect(failedCall.attributes["error.type"]).toBe("tool_error");
  expect(failedCall.status).toBe(2);
  const notFound = failure.filter((s) => s.parentSpanId === failedCall.spanId);
  expect(notFound.some((s) => s.attributes["http.response.status_code"] === 404 && s.status === 2)).toBe(true);

  // The caller's key names are their data: no span carries one.
  expect(JSON.stringify(receiver.spans)).not.toContain("q3-key-name");
  expect(receiver.contentTypes.every((t) => t === "application/x-protobuf")).toBe(true);
}, 60_000);

test("every other request is a span too, named by its method (and prompt), its parent the caller's", async () => {
  const { client, close } = await connectBinary({ env: { ...s3Env(), ...otel() } });
  const ctx = callerContext();
  try {
    await client.request(
      { method: "tools/list", params: { _meta: { traceparent: ctx.traceparent } } },
      ListToolsResultSchema,
    );
    const prompts = await client.listPrompts();
    const name = prompts.prompts[0]!.name;
    // Without its arguments: refused (-32602), as the span says.
    await expect(
      client.request(
        { method: "prompts/get", params: { name, _meta: { traceparent: ctx.traceparent } } },
        GetPromptResultSchema,
      ),
    ).rejects.toThrow("-32602");
  } finally {
    await close();
  }
  const spans = await trace(ctx.traceId, 2);
  expect(spans.find((s) => s.name === "tools/list")).toMatchObject({ parentSpanId: ctx.spanId, kind: 2 });
  const got = spans.find((s) => s.name.startsWith("prompts/get "))!;
  expect(got.parentSpanId).toBe(ctx.spanId);
  expect(got.attributes["gen_ai.prompt.name"]).toBe(got.name.slice("prompts/get ".length));
  expect(got).toMatchObject({ status: 2, attributes: { "error.type": "-32602" } });
}, 60_000);

test("over HTTP: without a traceparent in _meta, the request's traceparent header is the parent", async () => {
  const server = await startHttpBinary({ env: { ...s3Env(), ...otel(), STORE_HTTP_TOKENS: `ci:${TOKEN}` } });
  const ctx = callerContext();
  try {
    const client = await connectHttp(server.url, TOKEN, { traceparent: ctx.traceparent });
    try {
      const head = await client.callTool({ name: "list_objects", arguments: { bucket_name: bucket } });
      expect(head.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const spans = await trace(ctx.traceId, 2);
    const call = spans.find((s) => s.name === "tools/call list_objects")!;
    expect(call.parentSpanId).toBe(ctx.spanId);
    expect(spans.some((s) => s.parentSpanId === call.spanId && s.name.startsWith("S3.ListObjects"))).toBe(true);
  } finally {
    // SIGTERM: the spans still in the batch go out before the exit.
    expect(await server.stop()).toBe(0);
  }
}, 60_000);

test("over HTTP on 2026-07-28 too: the traceparent header is the parent of the call's span", async () => {
  const server = await startHttpBinary({ env: { ...s3Env(), ...otel(), STORE_HTTP_TOKENS: `ci:${TOKEN}` } });
  const ctx = callerContext();
  try {
    const client = new ModernClient({ name: "modern-trace", version: "1" }, {
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    } as never);
    await client.connect(
      new ModernTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}`, traceparent: ctx.traceparent } },
      }),
    );
    try {
      const listed = await client.callTool({ name: "list_objects", arguments: { bucket_name: bucket } });
      expect(listed.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const spans = await trace(ctx.traceId, 2);
    const call = spans.find((s) => s.name === "tools/call list_objects")!;
    expect(call.parentSpanId).toBe(ctx.spanId);
  } finally {
    expect(await server.stop()).toBe(0);
  }
}, 60_000);

test("metrics pushed as OTLP: the call's duration by tool and error type, bytes by direction, the service named", async () => {
  const { client, close } = await connectBinary({
    env: {
      ...s3Env(),
      ...otel(),
      OTEL_SERVICE_NAME: "store-mcp-metrics-pushed",
      OTEL_METRIC_EXPORT_INTERVAL: "200",
      OTEL_TRACES_EXPORTER: "none",
    },
  });
  try {
    const put = await client.callTool({
      name: "put_object",
      arguments: { bucket_name: bucket, object_key: "metrics/pushed.txt", content: "pushed!" },
    });
    expect(put.isError).toBeFalsy();
    const missing = await client.callTool({
      name: "head_object",
      arguments: { bucket_name: bucket, object_key: "nope" },
    });
    expect(missing.isError).toBe(true);
    // This process's points (the other tests' servers push theirs too).
    const mine = () => receiver.points.filter((p) => p.resource["service.name"] === "store-mcp-metrics-pushed");
    const calls = () => mine().filter((p) => p.name === "mcp.server.operation.duration");
    await waitFor(
      "the calls' durations pushed",
      () => calls().some((p) => p.attributes["gen_ai.tool.name"] === "head_object"),
      20_000,
      50,
    );
    const put1 = calls().find((p) => p.attributes["gen_ai.tool.name"] === "put_object")!;
    expect(put1).toMatchObject({ unit: "s", value: 1, attributes: { "mcp.method.name": "tools/call" } });
    expect(put1.attributes["error.type"]).toBeUndefined();
    expect(calls().find((p) => p.attributes["gen_ai.tool.name"] === "head_object")!.attributes["error.type"]).toBe(
      "tool_error",
    );
    expect(put1.resource["deployment.environment.name"]).toBe("ci");
    const bytes = mine().filter((p) => p.name === "store_mcp.transfer.size");
    expect(bytes.find((p) => p.attributes["store_mcp.direction"] === "upload")?.value).toBe("pushed!".length);
  } finally {
    await close();
  }
  // With traces turned off (OTEL_TRACES_EXPORTER=none), no span of that process arrived.
  expect(receiver.spans.some((s) => s.name === "tools/call head_object")).toBe(false);
  expect(JSON.stringify(receiver.points)).not.toContain("pushed.txt");
}, 60_000);
