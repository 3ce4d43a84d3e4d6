/**
 * What the server tells an operator's dashboards: every layer records here,
 * and nothing is recorded unless telemetry was configured at start-up
 * (transports/telemetry/ sets the real recorder; docs/remote-mode.md,
 * "Operate"). Off, each record is one call into an empty function: no
 * OpenTelemetry module is loaded, nothing is kept.
 *
 * What may be recorded: tool and operation names, HTTP status codes, error
 * codes, byte counts, durations. Never a secret, a token, a bucket's key
 * name or an object's bytes: key names are the caller's data.
 */

/** Why a call was turned away before it ran (counted by reason). */
export type Refusal = "rate_limit" | "policy" | "query_busy" | "query_budget";

export interface Telemetry {
  /** One MCP request handled: its method (tools/call), the tool, how long, and its error type (tool_error) if it failed. */
  operation(method: string, tool: string | undefined, seconds: number, errorType?: string): void;
  /** Bytes a call moved, by tool and direction. */
  transferred(tool: string, direction: Direction, bytes: number): void;
  /** One request to a store: the S3 operation, the HTTP status (0: none came), how long. */
  storeRequest(operation: string, status: number, seconds: number): void;
  refused(reason: Refusal): void;
  /** A figure read when the metrics are collected (jobs running, query slots in use, memory budget in use). */
  watch(name: WatchedFigure, read: () => number): void;
}

export type Direction = "upload" | "download" | "copy";
export type WatchedFigure = "jobs.running" | "query.slots.used" | "memory.budget.used";

const OFF: Telemetry = {
  operation() {},
  transferred() {},
  storeRequest() {},
  refused() {},
  watch() {},
};

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
