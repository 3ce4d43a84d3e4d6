/**
 * Remote mode (--transport http): one S3 client and one memory budget for
 * the process, a fresh MCP server per request with the tools its caller may
 * use, the HTTP transport in front, SIGTERM (SIGINT) that drains
 * before exiting, and SIGHUP that reopens the audit log.
 */
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import type { AuditLog } from "./audit.ts";
import { createAuthenticator } from "./auth/index.ts";
import type { Config } from "./config.ts";
import { CallTracker, SHUTDOWN_SIGNALS } from "./lifecycle.ts";
import type { Logger } from "./log.ts";
import { ByteBudget } from "./memory.ts";
import { missingScope } from "./policy.ts";
import { scrubSecrets } from "./redact.ts";
import { READ_MEMORY_BUDGET, createServer, serverOptions } from "./server.ts";
import type { Storage } from "./storage/index.ts";
import { EVERY_TOOL } from "./tools/index.ts";
import { startHttpServer } from "./transports/http.ts";

export function startRemote(config: Config, allowedDirs: string[], storages: { storage: Storage; storageOf(name: string): Storage }, log: Logger, audit?: AuditLog): void {
  const http = config.http!;
  const calls = new CallTracker();
  const memory = new ByteBudget(READ_MEMORY_BUDGET);
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const options = serverOptions(config, allowedDirs);
  const server = startHttpServer({
    config: http,
    auth: createAuthenticator(http),
    serverFor: (caller, leases) => createServer({ ...options, remote: { scopes: caller.scopes, caller: caller.id } }, { ...storages, log, calls, memory, leases, jsonSchemaValidator, ...(audit ? { audit } : {}) }),
    missingScope: (name, args, caller) => missingScope(EVERY_TOOL, name, args, caller.scopes),
    log,
  });
  log.info(`ready on ${server.url} (resource ${http.resourceUrl})`);
  if (allowedDirs.length === 0) log.info("local files are off (no --allowed-dir): upload_file and get_object download are not offered; presign_url moves bytes");

  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`shutting down (${why}): no new requests, up to ${http.shutdownGraceMs} ms for calls in flight`);
    await server.shutdown(http.shutdownGraceMs, () => calls.shutdown(5_000));
    process.exit(0);
  };
  // A service's SIGHUP reloads (log rotation: the audit log is opened anew); SIGTERM and SIGINT stop it.
  for (const signal of SHUTDOWN_SIGNALS.filter((s) => s !== "SIGHUP")) process.on(signal, () => void stop(signal));
  process.on("SIGHUP", () => {
    audit?.reopen();
    log.info("SIGHUP: audit log reopened");
  });
  process.on("unhandledRejection", (reason) => log.error(`unhandled rejection: ${scrubSecrets(String((reason as Error)?.stack ?? reason))}`));
}
