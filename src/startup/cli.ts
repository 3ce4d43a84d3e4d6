#!/usr/bin/env bun
/**
 * The start: options and environment → one checked configuration (every
 * problem at once), telemetry if asked for, then stdio or remote mode.
 *
 * The budget this room defends (docs/performance.md, "Start-up"; held by
 * test/unit/lazy-loading.test.ts and BENCH_ONLY=start): spawn → tools/list
 * answered within 80 ms and 3× Bun's own floor; `--version` loads main.ts
 * alone; over stdio a 2025 initialize and the first tools/list are answered
 * from the configuration and the tool cards (early-answers.ts) before the MCP
 * SDK, zod, the AWS SDK, any tool module, DuckDB or OpenTelemetry loads. What
 * a start needs goes here or in what it imports at once; anything else loads
 * on first use (a dynamic import), and a new import here is measured first.
 */
import { defineCommand, runMain } from "citty";
import { selectionProblems, selectionWarning } from "../access/policy.ts";
import { ARGS, cliOptionsFrom } from "../config/cli-options.ts";
import { resolveConfig } from "../config/config.ts";
import { describeConfig } from "../config/config-description.ts";
import type { Config } from "../config/config-types.ts";
import { realAllowedDirs } from "../local/allowed.ts";
import { firstAnswers, SERVER_NAME, SERVER_VERSION, serverOptions } from "../mcp/offer.ts";
import { type AuditLog, openAuditLog } from "../runtime/audit.ts";
import { CallTracker, SHUTDOWN_SIGNALS } from "../runtime/lifecycle.ts";
import { createLogger, type Logger } from "../runtime/log.ts";
import { SendLeases } from "../runtime/memory.ts";
import { registerStartupCredentials, scrubSecrets } from "../runtime/redact.ts";
import { type Telemetry, telemetry, together, useTelemetry } from "../runtime/telemetry.ts";
import { EVERY_CARD } from "../tool-registry/cards.ts";

async function start(rawArgs: string[], args: Record<string, unknown>): Promise<void> {
  // First of all: nothing below may echo a credential, not even a configuration error.
  registerStartupCredentials(rawArgs, process.env);
  const { cli, errors: optionErrors } = cliOptionsFrom(rawArgs, args);
  const resolved = resolveConfig(cli, process.env);
  const errors = [...optionErrors, ...(resolved.ok ? [] : resolved.errors)];
  // Checked whatever else failed: configuration errors are reported all at once.
  const given = resolved.ok ? resolved.config : resolved.partial;
  const dirs = realAllowedDirs(given.allowedDirs, process.cwd(), given.allowBroadDirs);
  errors.push(...dirs.errors);
  if (resolved.ok) errors.push(...selectionProblems(resolved.config.tools, EVERY_CARD));
  if (!resolved.ok || errors.length > 0) {
    // Before any transport exists: stderr only, exit 1.
    process.stderr.write(
      `${SERVER_NAME}: cannot start, the configuration has ${errors.length} problem(s):\n${errors.map((e) => `  - ${scrubSecrets(e)}`).join("\n")}\nRun with --help for the options.\n`,
    );
    process.exit(1);
  }
  const config = resolved.config;
  const log = createLogger(config.logLevel);
  for (const warning of resolved.warnings) log.warn(warning);
  const deleteWarning = selectionWarning(config.tools, EVERY_CARD, config.allowDelete);
  if (deleteWarning) log.warn(deleteWarning);
  log.info(`${SERVER_NAME} ${SERVER_VERSION} starting: ${JSON.stringify(describeConfig(config))}`);

  const audit = openAudit(config.auditLog, config.auditRequired ?? false, log);
  // Before anything that records: off unless STORE_METRICS_LISTEN or an OTLP endpoint is set (no OpenTelemetry module
  // loads then).
  if (config.metricsListen || config.otlpMetrics || config.traces) await startTelemetry(config, log);
  // What a killed server's queries left in the temp directory: looked at once the start is done.
  setTimeout(() => void import("../content/query/leftovers.ts").then((m) => m.sweepLeftovers()), 2_000).unref();

  if (config.transport === "http") {
    const [{ startRemote }, { createStoreStorages }] = await Promise.all([
      import("../transports/remote.ts"),
      import("../storage/index.ts"),
    ]);
    startRemote(config, dirs.dirs, createStoreStorages(config), log, audit);
    return;
  }
  const [{ StdioTransport }, { EarlyAnswers }, { createStoreStorages }] = await Promise.all([
    import("../transports/stdio.ts"),
    import("./early-answers.ts"),
    import("../storage/index.ts"),
  ]);
  const calls = new CallTracker();
  const leases = new SendLeases();
  const options = serverOptions(config, dirs.dirs);
  const storages = createStoreStorages(config);
  // initialize and tools/list are answered before the SDK is loaded (early-answers.ts); it loads right after.
  const stdio = new EarlyAnswers(
    new StdioTransport(log, process.stdin, process.stdout, undefined, leases),
    firstAnswers(options, storages),
    (method, ours, sdk) =>
      log.error(
        `the answer given to ${method} before the SDK was loaded differs from the SDK's (please report this): ${ours.slice(0, 400)} vs ${sdk.slice(0, 400)}`,
      ),
  );
  let close = () => stdio.close();
  installShutdown(log, calls, () => close());
  await stdio.listen();
  log.info("ready on stdio");
  await stdio.sdkNeeded;
  const [{ serveStdio }, { createServer }] = await Promise.all([
    import("@modelcontextprotocol/server/stdio"),
    import("../mcp/server.ts"),
  ]);
  const deps = { ...storages, log, calls, leases, ...(audit ? { audit } : {}) };
  // One server for the connection, on the protocol its first message opens: 2025's initialize or a 2026-07-28 request
  // (the SDK builds a second one when a client probes with server/discover, then falls back to initialize).
  const served = serveStdio(() => createServer(options, deps), {
    transport: stdio,
    onerror: (err) => log.debug(`stdio: ${scrubSecrets(err.message)}`),
  });
  close = () => served.close();
}

/** The audit log, opened before serving: one that cannot be opened stops the start (calls must not go unrecorded). */
function openAudit(target: string | undefined, required: boolean, log: Logger): AuditLog | undefined {
  if (!target) return undefined;
  try {
    return openAuditLog(target, (message) => log.error(message), required);
  } catch (err) {
    process.stderr.write(
      `${SERVER_NAME}: cannot start: the audit log ${target} cannot be opened for appending (${(err as Error).message}).\n`,
    );
    process.exit(1);
  }
}

/**
 * The operator's metrics (STORE_METRICS_LISTEN: transports/telemetry/metrics.ts) and traces (an OTLP endpoint in
 * OpenTelemetry's variables: traces.ts): a metrics address that cannot be listened on stops the start.
 */
async function startTelemetry(
  config: Pick<Config, "metricsListen" | "otlpMetrics" | "traces">,
  log: Logger,
): Promise<void> {
  const serviceName = process.env.OTEL_SERVICE_NAME?.trim() || SERVER_NAME;
  const parts: Partial<Telemetry>[] = [];
  const listen = config.metricsListen;
  if (listen || config.otlpMetrics) {
    const { startMetrics } = await import("../transports/telemetry/metrics.ts");
    try {
      const metrics = await startMetrics({
        ...(listen ? { listen } : {}),
        ...(config.otlpMetrics ? { otlp: config.otlpMetrics } : {}),
        serviceName,
        version: SERVER_VERSION,
      });
      parts.push(metrics);
      if (metrics.url) log.info(`metrics: Prometheus text at ${metrics.url}`);
      if (config.otlpMetrics) log.info("metrics: pushed as OTLP/HTTP to the OTEL_EXPORTER_OTLP_* endpoint");
    } catch (err) {
      process.stderr.write(
        `${SERVER_NAME}: cannot start: STORE_METRICS_LISTEN ${listen?.host}:${listen?.port} cannot be listened on (${(err as Error).message}).\n`,
      );
      process.exit(1);
    }
  }
  if (config.traces) {
    const { startTraces } = await import("../transports/telemetry/traces.ts");
    parts.push(await startTraces({ serviceName, version: SERVER_VERSION, env: process.env }));
    log.info("traces: exported as OTLP/HTTP to the OTEL_EXPORTER_OTLP_* endpoint");
  }
  useTelemetry(together(parts));
}

/** Exits 0 when the client closes stdin or on SIGINT/SIGTERM/SIGHUP, after in-flight calls cleaned up. */
function installShutdown(log: Logger, calls: CallTracker, close: () => Promise<void>): void {
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`shutting down (${why})`);
    await calls.shutdown(5_000);
    await close().catch(() => {});
    // The last calls' spans go out before the exit (nothing, with traces off); a collector that does not answer waits 2 s.
    await Promise.race([
      telemetry()
        .flush()
        .catch(() => {}),
      Bun.sleep(2_000),
    ]);
    process.exit(0);
  };
  process.stdin.on("end", () => void stop("stdin closed"));
  process.stdin.on("close", () => void stop("stdin closed"));
  // SIGHUP too: a closing terminal sends it and the npm launcher forwards it; an uncleaned exit would leave a download's temp file.
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, () => void stop(signal));
  // A stray rejection (e.g. from a library's background work) must not end the server.
  process.on("unhandledRejection", (reason) =>
    log.error(`unhandled rejection: ${scrubSecrets(String((reason as Error)?.stack ?? reason))}`),
  );
}

const main = defineCommand({
  meta: {
    name: SERVER_NAME,
    version: SERVER_VERSION,
    description: "MCP server for S3-compatible object storage (stdio or HTTP transport)",
  },
  args: ARGS,
  run: ({ rawArgs, args }) => start(rawArgs, args as Record<string, unknown>),
});

/** Plain help text (no colours: it is often read through a client's log viewer). */
function helpText(): string {
  const rows: [string, string][] = Object.entries(ARGS).map(([name, def]) => [
    def.type === "string" ? `--${name} <value>` : `--${name}`,
    def.description,
  ]);
  rows.push(["--help", "Print this help and exit"], ["--version", "Print the version and exit"]);
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return [
    `${SERVER_NAME} ${SERVER_VERSION}: MCP server for S3-compatible object storage, over stdio or HTTP.`,
    "",
    `Usage: ${SERVER_NAME} [options]             run the MCP server`,
    `       ${SERVER_NAME} doctor [options]      check the store setup (--write-test BUCKET, --json, --store NAME)`,
    "With no options, everything comes from the environment. Options beat STORE_* variables,",
    "which beat the AWS default credential chain (AWS_* variables, AWS_PROFILE, SSO, roles).",
    "",
    "Options:",
    ...rows.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`),
    "",
    "More variables: STORE_FORCE_PATH_STYLE, STORE_CHECKSUMS, STORE_CONNECT_TIMEOUT_MS,",
    "STORE_REQUEST_TIMEOUT_MS, STORE_OPERATION_TIMEOUT_MS, STORE_MAX_ATTEMPTS,",
    "STORE_MULTIPART_COPY_THRESHOLD; HTTP mode: STORE_HTTP_TOKENS (label:token,… — never on argv),",
    "STORE_OAUTH_SCOPE_READ/WRITE/DELETE, STORE_SHUTDOWN_GRACE_MS (see the README).",
    "",
  ].join("\n");
}

// `doctor` is a command of its own (same options, plus --write-test and --json), loaded only when asked for.
if (process.argv[2] === "doctor") {
  void import("../doctor/index.ts").then(({ runDoctor }) => runDoctor(process.argv.slice(3)));
} else {
  void runMain(main, {
    showUsage: async () => {
      process.stdout.write(helpText());
    },
  });
}
