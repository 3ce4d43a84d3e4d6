/** What the HTTP transport (http.ts) is given, and what it gives back. */
import type { McpServer } from "@modelcontextprotocol/server";
import type { Authenticator, Caller } from "../auth/index.ts";
import type { HttpConfig } from "../config/http-config.ts";
import type { Logger } from "../runtime/log.ts";
import type { SendLeases } from "../runtime/memory.ts";
import type { CallRules } from "./http-call-refusal.ts";
import type { ServedRequest } from "./http-eras.ts";
import type { LegacyQuestions } from "./legacy-questions.ts";
import type { Readiness } from "./readiness.ts";
import type { Limiter } from "./shared-limits.ts";

/** What the transport is given; `CallRules` refuse a tools/call before any MCP server sees it (http-call-refusal.ts). */
export interface HttpDeps extends CallRules {
  config: HttpConfig;
  auth: Authenticator;
  /** An MCP server for one request, with the tools this caller may use; it hands its calls' reservations to `leases`. */
  serverFor(caller: Caller, leases: SendLeases, request: ServedRequest): McpServer;
  log: Logger;
  /** The per-caller limits (remote.ts makes them, so jobs can hold slots); made here from the config when absent. */
  limits?: Limiter;
  /** Questions to 2025 clients and their answers (remote.ts shares them between replicas); this replica's own when absent. */
  questions?: LegacyQuestions;
  /** /readyz's checks (readiness.ts); without them, ready while not stopping. */
  readiness?: () => Promise<Readiness>;
}

export interface HttpServer {
  url: string;
  /** Stops accepting, waits up to `graceMs` for requests in flight, answers what is left with a "shutting down" error, then `cancel`s it. */
  shutdown(graceMs: number, cancel: () => Promise<void>): Promise<void>;
}
