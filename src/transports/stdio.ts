/**
 * MCP over stdin/stdout, one JSON message a line. Unlike the SDK's transport,
 * which drops the whole connection when one message passes 10 MiB, a line
 * over the limit is skipped as it streams in (never held whole), answered
 * with a JSON-RPC error when its id can be read, and logged; the session
 * goes on. Lines are gathered as chunks and joined once, not re-copied on
 * every read.
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import type { Logger } from "../runtime/log.ts";
import { memoryPacer, type SendLeases } from "../runtime/memory.ts";

/** The largest message accepted from the client: the SDK clients' own limit. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** How much of a refused message is kept to find its id. */
const HEAD_BYTES = 64 * 1024;
const INVALID_REQUEST = -32600;

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private parts: Buffer[] = [];
  /** Collects after every 16 MiB of answers: a large read leaves its bytes, text and JSON behind as garbage. */
  private readonly pace = memoryPacer(16 * 1024 * 1024);
  private size = 0;
  /** Set while a line over the limit streams past: its first bytes, for the id. */
  private oversized: Buffer | undefined;
  private oversizedBytes = 0;

  constructor(
    private readonly log: Logger,
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly maxBytes = MAX_MESSAGE_BYTES,
    /** Told when each answer has been handed to the OS, so its memory reservation can end. */
    private readonly leases?: SendLeases,
  ) {}

  private readonly onData = (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, nl));
      this.endLine();
      start = nl + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  };

  private readonly onError = (error: Error) => this.onerror?.(error);

  async start(): Promise<void> {
    this.stdin.on("data", this.onData);
    this.stdin.on("error", this.onError);
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.oversized) {
      this.oversizedBytes += part.length;
      return;
    }
    this.parts.push(part);
    this.size += part.length;
    if (this.size > this.maxBytes) {
      this.oversized = Buffer.concat(this.parts).subarray(0, HEAD_BYTES);
      this.oversizedBytes = this.size;
      this.parts = [];
      this.size = 0;
    }
  }

  private endLine(): void {
    if (this.oversized) {
      this.refuse(this.oversized, this.oversizedBytes);
      this.oversized = undefined;
      this.oversizedBytes = 0;
      return;
    }
    const line = Buffer.concat(this.parts).toString("utf8").replace(/\r$/, "");
    this.parts = [];
    this.size = 0;
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = jsonRpcMessage(JSON.parse(line));
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    this.onmessage?.(message);
  }

  private refuse(head: Buffer, bytes: number): void {
    const id = topLevelId(head.toString("utf8"));
    this.log.warn(
      `refused a message of ${bytes} bytes from the client (the limit is ${this.maxBytes})${id === undefined ? "" : `; answered id ${JSON.stringify(id)} with an error`}`,
    );
    if (id === undefined) return;
    void this.send({
      jsonrpc: "2.0",
      id,
      error: {
        code: INVALID_REQUEST,
        message: `Request too large: ${bytes} bytes, over the server's limit of ${this.maxBytes} bytes per message. Send less data in one call.`,
      },
    } as JSONRPCMessage);
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.onData);
    this.stdin.off("error", this.onError);
    this.parts = [];
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const id = "result" in message || "error" in message ? (message as { id?: string | number }).id : undefined;
    const json = `${JSON.stringify(message)}\n`;
    return new Promise((resolve) => {
      const written = this.stdout.write(json, () => {
        if (id !== undefined) this.leases?.sent(id);
        // Large answers leave large garbage (the result, its JSON, the encoded bytes): collect it in step.
        this.pace(json.length);
      });
      if (written) resolve();
      else this.stdout.once("drain", resolve);
    });
  }
}

/**
 * A JSON-RPC 2.0 message's shape: a request or notification (a method), or a
 * response (an id with a result or an error). What its params must hold is
 * the SDK's to check, per method and protocol version; this is only the
 * envelope, checked here so the transport needs no SDK (the stdio start
 * answers its first messages before the SDK is loaded: early-answers.ts).
 */
export function jsonRpcMessage(value: unknown): JSONRPCMessage {
  const m = value as Record<string, unknown> | null;
  const problem = (what: string) => new Error(`Invalid JSON-RPC message: ${what}.`);
  if (typeof m !== "object" || m === null || Array.isArray(m)) throw problem("not an object");
  if (m.jsonrpc !== "2.0") throw problem('"jsonrpc" is not "2.0"');
  const id = m.id;
  const validId = typeof id === "string" || (typeof id === "number" && Number.isInteger(id));
  if ("method" in m) {
    if (typeof m.method !== "string") throw problem('"method" is not a string');
    if ("id" in m && !validId) throw problem('"id" is not a string or an integer');
    if ("params" in m && (typeof m.params !== "object" || m.params === null || Array.isArray(m.params)))
      throw problem('"params" is not an object');
    return m as JSONRPCMessage;
  }
  if ("result" in m) {
    if (!validId) throw problem('"id" is not a string or an integer');
    if (typeof m.result !== "object" || m.result === null) throw problem('"result" is not an object');
    return m as JSONRPCMessage;
  }
  if ("error" in m) {
    const error = m.error as Record<string, unknown> | null;
    if (!validId && id !== null && id !== undefined) throw problem('"id" is not a string or an integer');
    if (
      typeof error !== "object" ||
      error === null ||
      typeof error.code !== "number" ||
      typeof error.message !== "string"
    )
      throw problem('"error" has no code and message');
    return m as JSONRPCMessage;
  }
  throw problem("neither a request, a notification nor a response");
}

/**
 * The `id` member of the outermost object in the first bytes of a JSON text,
 * or undefined. A small scanner, since the text is cut and will not parse.
 */
export function topLevelId(text: string): string | number | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (c === '"') {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      const key = text.slice(i, end + 1);
      i = end;
      if (depth !== 1) continue;
      const after = /^\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/.exec(text.slice(end + 1, end + 200));
      if (!after) continue;
      if (JSON.parse(key) === "id") return JSON.parse(after[1]!) as string | number;
    }
  }
  return undefined;
}

function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}
