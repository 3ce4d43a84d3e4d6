/**
 * What the server tells an operator's dashboards and tracing: every layer
 * records here, and nothing is recorded unless telemetry was configured at
 * start-up (transports/telemetry/ sets the real recorders: metrics, traces;
 * docs/remote-mode.md, "Operate"). Off, each record is one call into an
 * empty function: no OpenTelemetry module is loaded, nothing is kept.
 *
 * What may be recorded: tool and operation names, HTTP status codes, error
 * codes, byte counts, durations; a span also its bucket. Never a secret, a
 * token, a key name or an object's bytes: key names are the caller's data.
 */

/** Why a call was turned away before it ran (counted by reason). */
export type Refusal = "rate_limit" | "policy" | "query_busy" | "query_budget";

/** W3C trace context of a caller: from a request's params._meta, or its HTTP headers. */
export interface TraceParent {
  traceparent: string;
  tracestate?: string;
}

/** Where the HTTP edge leaves a request's traceparent/tracestate headers for the call (the SDK's authInfo.extra). */
export const TRACE_HEADERS = "store-mcp-server/trace-headers";

/** One MCP request as a span: the store requests made inside `run` are its children. */
export interface CallSpan {
  run<T>(work: () => Promise<T>): Promise<T>;
  /** The request answered: with an error type (tool_error, or the JSON-RPC error's code) if it failed. */
  end(errorType?: string): void;
}

/** What a store request's span says besides its operation and status. */
export interface StoreRequestDetail {
  bucket?: string;
  /** 1 for the first try, 2 for the first retry… */
  attempt?: number;
  /** Bytes of the request's body and of the answer's, where their lengths were said. */
  sentBytes?: number;
  receivedBytes?: number;
}

export interface Telemetry {
  /** One MCP request handled: its method (tools/call), the tool, how long, and its error type (tool_error) if it failed. */
  operation(method: string, tool: string | undefined, seconds: number, errorType?: string): void;
  /** Bytes a call moved, by tool and direction. */
  transferred(tool: string, direction: Direction, bytes: number): void;
  /** One request to a store: the S3 operation, the HTTP status (0: none came), how long, and for its span `detail`. */
  storeRequest(operation: string, status: number, seconds: number, detail?: StoreRequestDetail): void;
  refused(reason: Refusal): void;
  /** A figure read when the metrics are collected (jobs running, query slots in use, memory budget in use). */
  watch(name: WatchedFigure, read: () => number): void;
  /** A request's span (`target`: the tool or prompt), its parent the caller's trace context when given. */
  span(
    method: string,
    target: string | undefined,
    requestId: string | number | undefined,
    parent: TraceParent | undefined,
  ): CallSpan;
  /** Whether anything records (start-up set a recorder): off, callers skip even their wrapping. */
  readonly enabled: boolean;
  /** Sends what is recorded and not yet sent (before the process exits). */
  flush(): Promise<void>;
}

export type Direction = "upload" | "download" | "copy";
export type WatchedFigure = "jobs.running" | "query.slots.used" | "memory.budget.used";

const NO_SPAN: CallSpan = { run: (work) => work(), end() {} };

const OFF: Telemetry = {
  operation() {},
  transferred() {},
  storeRequest() {},
  refused() {},
  watch() {},
  span: () => NO_SPAN,
  flush: async () => {},
  enabled: false,
};

/** One recorder of several (metrics, traces): each record goes to those that take it. */
export function together(parts: Partial<Omit<Telemetry, "enabled">>[]): Telemetry {
  const all = <K extends Exclude<keyof Telemetry, "enabled">>(key: K) =>
    parts.filter((p) => p[key] !== undefined).map((p) => p[key]!);
  const operation = all("operation");
  const transferred = all("transferred");
  const storeRequest = all("storeRequest");
  const refused = all("refused");
  const watch = all("watch");
  const spans = all("span")[0];
  const flushes = all("flush");
  return {
    operation: (...a) => {
      for (const f of operation) f(...a);
    },
    transferred: (...a) => {
      for (const f of transferred) f(...a);
    },
    storeRequest: (...a) => {
      for (const f of storeRequest) f(...a);
    },
    refused: (...a) => {
      for (const f of refused) f(...a);
    },
    watch: (...a) => {
      for (const f of watch) f(...a);
    },
    span: spans ?? OFF.span,
    flush: async () => void (await Promise.all(flushes.map((f) => f()))),
    enabled: true,
  };
}

let current: Telemetry = OFF;

/** The recorder every layer records to (off until start-up sets one). */
export function telemetry(): Telemetry {
  return current;
}

/** Set once at start-up, when the operator configured metrics. */
export function useTelemetry(recorder: Telemetry): void {
  current = recorder;
}

/** Which way a tool's bytes go, for the bytes-moved figure; undefined: it moves none worth counting. */
export function directionOf(tool: string): Direction | undefined {
  if (tool === "upload_file" || tool === "put_object" || tool === "upload_directory") return "upload";
  if (tool === "get_object" || tool === "download_prefix") return "download";
  if (tool === "copy_object" || tool === "copy_prefix") return "copy";
  return undefined;
}

/** A said Content-Length as a store request's detail; nothing when none (or nonsense) was said. */
export function saidBytes(name: "sentBytes" | "receivedBytes", value: string | null | undefined): StoreRequestDetail {
  const n = Number(value);
  return value !== undefined && value !== null && Number.isInteger(n) && n >= 0 ? { [name]: n } : {};
}

/**
 * One request to a store, timed to its answer's headers (a body streams on) for the recorder, the SDK's and the quick
 * requests alike; `answerOf` says its status and the length it said, `detail` the rest of its span (asked only then).
 * Off, the request is just sent: nothing is timed or built.
 */
export async function timedStoreRequest<T>(
  operation: string,
  send: () => Promise<T>,
  answerOf: (answer: T) => { status: number; length: string | null | undefined },
  detail: () => StoreRequestDetail,
): Promise<T> {
  const recorder = current;
  if (!recorder.enabled) return send();
  const started = performance.now();
  let answered: { status: number; length: string | null | undefined } = { status: 0, length: undefined };
  try {
    const answer = await send();
    answered = answerOf(answer);
    return answer;
  } finally {
    recorder.storeRequest(operation, answered.status, (performance.now() - started) / 1000, {
      ...detail(),
      ...saidBytes("receivedBytes", answered.length),
    });
  }
}
