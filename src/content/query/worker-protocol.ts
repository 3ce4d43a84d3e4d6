/**
 * What the server and a query worker (the same executable, started with
 * WORKER_ARGUMENT) say to each other: one JSON message a line, the server's
 * on the worker's stdin, the worker's on its stdout. The worker holds no
 * credentials and reaches no store: the server fetches every byte into the
 * query's private directory first, and fills a Parquet object's columns when
 * the worker names the plan. A message larger than MAX_MESSAGE_BYTES ends the
 * worker (its answers are cut to the response budget before they are sent).
 */
import type { EngineLimits, QueryPage, RowWindow } from "./engine.ts";
import type { TableFile } from "./tables.ts";

/** argv[1] (compiled) that makes the executable a query worker instead of a server. */
export const WORKER_ARGUMENT = "__query-worker";

/** The longest line either side accepts. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface RunQuery {
  type: "run";
  /** The query's private directory: the engine may reach nothing else. */
  dir: string;
  files: TableFile[];
  sql: string;
  window: RowWindow;
  limits: EngineLimits;
  /** Whether some files are placed in part (Parquet by columns): then the worker sends the plan and waits for "filled". */
  narrowed: boolean;
}

export type ToWorker = RunQuery | { type: "filled" } | { type: "completed"; more: boolean };

/** An ActionableError's fields, as they cross the pipe. */
export interface ErrorFields {
  resource: string;
  code: string;
  message: string;
  hint: string;
  retryable?: boolean;
}

export type FromWorker =
  | { type: "ready" }
  | { type: "plan"; plan: unknown }
  | { type: "complete" }
  /** `rss`: the worker's resident size once the query is done (a worker that grew is not used again). */
  | { type: "result"; page: QueryPage; rss: number }
  | { type: "error"; error: ErrorFields; rss: number }
  /** Sent just before the worker ends itself for passing its memory cap. */
  | { type: "memory"; rss: number };

/** Splits a byte stream into JSON messages; a line past `max` bytes is an error (the other side misbehaves). */
export async function* messages<T>(
  stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  max = MAX_MESSAGE_BYTES,
): AsyncGenerator<T> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of stream as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline = buffered.indexOf("\n");
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.trim()) yield JSON.parse(line) as T;
      newline = buffered.indexOf("\n");
    }
    if (buffered.length > max) throw new Error(`a message of over ${max} bytes`);
  }
}

export const line = (message: ToWorker | FromWorker) => `${JSON.stringify(message)}\n`;
