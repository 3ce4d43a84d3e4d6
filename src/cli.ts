#!/usr/bin/env bun
import { defineCommand, runMain } from "citty";
import { describeConfig, resolveConfig, type CliOptions } from "./config.ts";
import { CallTracker } from "./lifecycle.ts";
import { SendLeases } from "./memory.ts";
import { realAllowedDirs } from "./local/allowed.ts";
import { createLogger, DEFAULT_LOG_DIRECTIVE, type Logger } from "./log.ts";
import { registerStartupCredentials, scrubSecrets } from "./redact.ts";
import { selectionProblems } from "./policy.ts";
import { SERVER_NAME, SERVER_VERSION, createServer } from "./server.ts";
import { ALL_TOOLS } from "./tools/index.ts";

const ARGS = {
  "access-key-id": { type: "string", description: "Access key ID for storage authentication (env STORE_ACCESS_KEY_ID)" },
  "secret-access-key": { type: "string", description: "Secret access key (env STORE_SECRET_ACCESS_KEY; prefer the env, argv is visible to other users)" },
  "session-token": { type: "string", description: "Session token for temporary credentials (env STORE_SESSION_TOKEN)" },
  region: { type: "string", description: "Region for storage operations (env STORE_REGION; default us-east-1)" },
  "endpoint-url": { type: "string", description: "Custom endpoint URL for S3-compatible stores (env STORE_ENDPOINT_URL)" },
  "log-level": { type: "string", description: `Log level or env_logger-style filter (env RUST_LOG; default ${DEFAULT_LOG_DIRECTIVE})` },
  "allowed-dir": { type: "string", description: "A local directory tools may read and write; repeatable (env STORE_ALLOWED_DIRS)" },
  "read-only": { type: "boolean", description: "Offer only tools that do not change the store (env STORE_READ_ONLY)" },
  bucket: { type: "string", description: "Limit every tool to this bucket; repeatable (env STORE_BUCKETS)" },
  "allow-delete": { type: "boolean", description: "Offer delete_object and delete_objects (env STORE_ALLOW_DELETE)" },
  tools: { type: "string", description: "Offer only these tools: comma list of names or groups read, write, delete, admin (env STORE_TOOLS)" },
  "allow-broad-dirs": { type: "boolean", description: "Allow / , the home directory, its ancestors and system directories as allowed dirs (env STORE_ALLOW_BROAD_DIRS)" },
  transport: { type: "string", description: "stdio (default) or http: remote mode, MCP Streamable HTTP at /mcp (env STORE_TRANSPORT)" },
  listen: { type: "string", description: "HTTP mode: HOST:PORT to listen on (env STORE_LISTEN; default 127.0.0.1:8787)" },
  "resource-url": { type: "string", description: "HTTP mode: the public URL of /mcp as clients reach it (env STORE_RESOURCE_URL)" },
  "oauth-issuer": { type: "string", description: "HTTP mode: accept JWT access tokens from this OAuth/OIDC issuer (env STORE_OAUTH_ISSUER)" },
  "oauth-audience": { type: "string", description: "HTTP mode: the aud tokens must carry (env STORE_OAUTH_AUDIENCE; default the resource URL)" },
  "oauth-jwks-url": { type: "string", description: "HTTP mode: the issuer's JWKS URL (env STORE_OAUTH_JWKS_URL; default from its metadata)" },
  "allowed-host": { type: "string", description: "HTTP mode: a Host header to accept besides localhost and the listen address; repeatable (env STORE_ALLOWED_HOSTS)" },
  "allowed-origin": { type: "string", description: "HTTP mode: a browser Origin to accept, with CORS; repeatable (env STORE_ALLOWED_ORIGINS)" },
} as const;

const REPEATABLE = new Set(["allowed-dir", "bucket", "allowed-host", "allowed-origin"]);

/** Options citty does not check: unknown names, and every value of the repeatable ones. */
function scanRawArgs(rawArgs: string[]): { repeated: Map<string, string[]>; errors: string[] } {
  const known = new Set([...Object.keys(ARGS), "help", "version"]);
  const repeated = new Map<string, string[]>();
  const errors: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (!arg.startsWith("-")) {
      // Not echoed: a stray value is often a secret that lost its option name.
      errors.push(`unexpected argument #${i + 1} (its value is not shown); this command takes only options (see --help).`);
      continue;
    }
    const [flag, inline] = arg.replace(/^--?/, "").split(/=(.*)/s, 2) as [string, string | undefined];
    const name = flag.replace(/^no-/, "");
    if (!known.has(name) && name !== "h" && name !== "v") {
      errors.push(`unknown option "--${flag}" (see --help for the options).`);
      continue;
    }
    const def = ARGS[name as keyof typeof ARGS] as { type: string } | undefined;
    if (def?.type !== "string") continue;
    const value = inline ?? rawArgs[i + 1];
    if (inline === undefined) i++;
    if (value === undefined || (inline === undefined && value.startsWith("--"))) {
      errors.push(`option --${name} needs a value.`);
      if (value?.startsWith("--")) i--;
      continue;
    }
    if (REPEATABLE.has(name) && value.trim() === "") {
      errors.push(`option --${name} was given an empty value (an unset variable in the client's configuration?); name a directory or leave the option out.`);
      continue;
    }
    if (REPEATABLE.has(name)) repeated.set(name, [...(repeated.get(name) ?? []), value]);
  }
  return { repeated, errors };
}

async function start(rawArgs: string[], args: Record<string, unknown>): Promise<void> {
  // First of all: nothing below may echo a credential, not even a configuration error.
  registerStartupCredentials(rawArgs, process.env);
  const scan = scanRawArgs(rawArgs);
  const str = (name: string) => (typeof args[name] === "string" ? (args[name] as string) : undefined);
  const cli: CliOptions = {
    accessKeyId: str("access-key-id"),
    secretAccessKey: str("secret-access-key"),
    sessionToken: str("session-token"),
    region: str("region"),
    endpointUrl: str("endpoint-url"),
    logLevel: str("log-level"),
    allowedDirs: scan.repeated.get("allowed-dir"),
    buckets: scan.repeated.get("bucket"),
    readOnly: args["read-only"] === true,
    allowBroadDirs: args["allow-broad-dirs"] === true,
    allowDelete: args["allow-delete"] === true,
    tools: str("tools"),
    transport: str("transport"),
    listen: str("listen"),
    resourceUrl: str("resource-url"),
    oauthIssuer: str("oauth-issuer"),
    oauthAudience: str("oauth-audience"),
    oauthJwksUrl: str("oauth-jwks-url"),
    allowedHosts: scan.repeated.get("allowed-host"),
    allowedOrigins: scan.repeated.get("allowed-origin"),
  };
  const resolved = resolveConfig(cli, process.env);
  const errors = [...scan.errors, ...(resolved.ok ? [] : resolved.errors)];
  const dirs = resolved.ok ? realAllowedDirs(resolved.config.allowedDirs, process.cwd(), resolved.config.allowBroadDirs) : { dirs: [], errors: [] };
  errors.push(...dirs.errors);
  if (resolved.ok) errors.push(...selectionProblems(resolved.config.tools, ALL_TOOLS));
  if (!resolved.ok || errors.length > 0) {
    // Before any transport exists: stderr only, exit 1.
    process.stderr.write(`${SERVER_NAME}: cannot start, the configuration has ${errors.length} problem(s):\n${errors.map((e) => `  - ${scrubSecrets(e)}`).join("\n")}\nRun with --help for the options.\n`);
    process.exit(1);
  }
  const config = resolved.config;
  const log = createLogger(config.logLevel);
  for (const warning of resolved.warnings) log.warn(warning);
  log.info(`${SERVER_NAME} ${SERVER_VERSION} starting: ${JSON.stringify(describeConfig(config))}`);

  if (config.transport === "http") {
    const [{ startRemote }, { createS3Storage }] = await Promise.all([import("./remote.ts"), import("./storage/index.ts")]);
    startRemote(config, dirs.dirs, createS3Storage(config), log);
    return;
  }
  const [{ StdioTransport }, { createS3Storage }] = await Promise.all([import("./transports/stdio.ts"), import("./storage/index.ts")]);
  const calls = new CallTracker();
  const leases = new SendLeases();
  const server = createServer(
    { region: config.region, allowedDirs: dirs.dirs, cwd: process.cwd(), readOnly: config.readOnly, buckets: config.buckets, allowBroadDirs: config.allowBroadDirs, allowDelete: config.allowDelete, tools: config.tools, resourceLinks: config.resourceLinks },
    { storage: createS3Storage(config), log, calls, leases },
  );
  installShutdown(log, calls, () => server.close());
  await server.connect(new StdioTransport(log, process.stdin, process.stdout, undefined, leases));
  log.info("ready on stdio");
}

/** Exits 0 when the client closes stdin or on SIGINT/SIGTERM, after in-flight calls cleaned up. */
function installShutdown(log: Logger, calls: CallTracker, close: () => Promise<void>): void {
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`shutting down (${why})`);
    await calls.shutdown(5_000);
    await close().catch(() => {});
    process.exit(0);
  };
  process.stdin.on("end", () => void stop("stdin closed"));
  process.stdin.on("close", () => void stop("stdin closed"));
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  // A stray rejection (e.g. from a library's background work) must not end the server.
  process.on("unhandledRejection", (reason) => log.error(`unhandled rejection: ${scrubSecrets(String((reason as Error)?.stack ?? reason))}`));
}

const main = defineCommand({
  meta: { name: SERVER_NAME, version: SERVER_VERSION, description: "MCP server for S3-compatible object storage (stdio or HTTP transport)" },
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
    `Usage: ${SERVER_NAME} [options]`,
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

void runMain(main, {
  showUsage: async () => {
    process.stdout.write(helpText());
  },
});
