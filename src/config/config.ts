import { DEFAULT_LOG_DIRECTIVE, parseLogDirectives } from "../runtime/log.ts";
import { stateDirFrom } from "../runtime/state-dir.ts";
import type { CliOptions, Config } from "./config-types.ts";
import { readDeployment } from "./deployment-config.ts";
import { type Env, envValue, readBoolean, readPositiveInt, splitList } from "./env-values.ts";
import { readTransport, resolveHttpConfig } from "./http-config.ts";
import { readStores } from "./single-store-config.ts";
import { readTelemetry } from "./telemetry-config.ts";

export type { ChecksumMode, CliOptions, Config, StaticCredentials, StoreSettings } from "./config-types.ts";
export type { Env } from "./env-values.ts";

/**
 * A failed result still carries what the directories' own check needs (startup/cli.ts), so that every problem is reported
 * at once: a bad endpoint does not hide a bad --allowed-dir.
 */
export type ConfigResult =
  | { ok: true; config: Config; warnings: string[] }
  | { ok: false; errors: string[]; partial: Pick<Config, "allowedDirs" | "allowBroadDirs"> };

/** Half of the 60 s most MCP clients wait for a tool call: our error arrives before their timeout. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 30_000;
/** Under Claude Desktop's ~60 s (it cancels every call then, whatever progress it gets): a long call answers with a job handle first. */
export const DEFAULT_CALL_BUDGET_SECONDS = 45;

function readCallBudget(raw: string | undefined, errors: string[]): number {
  const value = raw?.trim();
  if (value === undefined || value === "") return DEFAULT_CALL_BUDGET_SECONDS;
  if (!/^\d+$/.test(value) || Number(value) > 3600) {
    errors.push(
      `call budget (--call-budget / STORE_CALL_BUDGET_SECONDS): "${value}" must be a whole number of seconds from 0 (never hand back a job) to 3600.`,
    );
    return DEFAULT_CALL_BUDGET_SECONDS;
  }
  return Number(value);
}

/** Jobs one caller may have running at once: the next long call is refused (JobLimit) until one ends. */
export const DEFAULT_MAX_RUNNING_JOBS = 4;

function readMaxRunningJobs(raw: string | undefined, errors: string[]): number {
  const value = raw?.trim();
  if (value === undefined || value === "") return DEFAULT_MAX_RUNNING_JOBS;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 100) {
    errors.push(`running jobs per caller (STORE_MAX_RUNNING_JOBS): "${value}" must be a whole number from 1 to 100.`);
    return DEFAULT_MAX_RUNNING_JOBS;
  }
  return Number(value);
}

function firstGiven(...values: (string | undefined)[]): string | undefined {
  return values.find((v) => v !== undefined && v.trim() !== "");
}

/**
 * Merges command-line options, the environment and defaults into one Config.
 * Every problem is collected so the user sees all of them in one go.
 */
export function resolveConfig(cli: CliOptions, env: Env): ConfigResult {
  const errors: string[] = [];
  const warnings: string[] = [];
  const access = readAccess(cli, env, errors);
  const limits = readLimits(cli, env, errors);
  const directive = firstGiven(cli.logLevel, envValue(env, "RUST_LOG")) ?? DEFAULT_LOG_DIRECTIVE;
  const parsed = parseLogDirectives(directive);
  if ("error" in parsed) errors.push(`log level: ${parsed.error}`);
  const stateDir = stateDirFrom({ ...env, ...(cli.stateDir !== undefined ? { STORE_STATE_DIR: cli.stateDir } : {}) });
  const transport = readTransport(cli, env, errors);
  const { auditLog, auditRequired, policy, passThrough } = readDeployment(cli, env, transport, errors);
  const http = transport === "http" ? resolveHttpConfig(cli, env, errors) : undefined;
  const telemetry = readTelemetry(env, errors);
  const stores = readStores(cli, env, access, errors, warnings);
  const first = stores[0]!;

  const { allowedDirs, allowBroadDirs } = access;
  if (errors.length > 0) return { ok: false, errors, partial: { allowedDirs, allowBroadDirs } };
  return {
    ok: true,
    warnings,
    config: {
      stores,
      ...(first.profile ? { profile: first.profile } : {}),
      credentials: first.credentials,
      credentialSource: first.credentialSource,
      region: first.region,
      endpointUrl: first.endpointUrl,
      forcePathStyle: first.forcePathStyle,
      checksums: first.checksums,
      provider: first.provider,
      ...(first.encryption ? { encryption: first.encryption } : {}),
      ...(first.customerKey ? { customerKey: first.customerKey } : {}),
      ...limits,
      logLevel: "level" in parsed ? parsed.level : "info",
      ...access,
      buckets: first.buckets,
      ...(auditLog ? { auditLog } : {}),
      ...(auditRequired ? { auditRequired } : {}),
      ...(stateDir ? { stateDir } : {}),
      ...(policy ? { policy } : {}),
      ...(passThrough ? { passThrough: { ...passThrough, endpoint: passThrough.endpoint ?? first.endpointUrl } } : {}),
      transport,
      ...(http ? { http } : {}),
      ...telemetry,
    },
  };
}

/** What the server may touch and do: directories, buckets, tools, and the write, delete and admin switches. */
function readAccess(cli: CliOptions, env: Env, errors: string[]) {
  const buckets = cli.buckets?.length ? cli.buckets : splitList(envValue(env, "STORE_BUCKETS"), ",");
  for (const bucket of buckets) {
    if (!/^[A-Za-z0-9._-]{1,255}$/.test(bucket)) errors.push(`bucket allowlist: "${bucket}" is not a bucket name.`);
  }
  return {
    allowedDirs: cli.allowedDirs?.length
      ? cli.allowedDirs
      : splitList(envValue(env, "STORE_ALLOWED_DIRS"), pathListSeparator),
    readOnly: cli.readOnly || readBoolean(env, "STORE_READ_ONLY", false, errors),
    allowBroadDirs: cli.allowBroadDirs || readBoolean(env, "STORE_ALLOW_BROAD_DIRS", false, errors),
    allowDelete: cli.allowDelete || readBoolean(env, "STORE_ALLOW_DELETE", false, errors),
    allowAdmin: cli.allowAdmin || readBoolean(env, "STORE_ALLOW_ADMIN", false, errors),
    tools: splitList(firstGiven(cli.tools, envValue(env, "STORE_TOOLS")), ","),
    // Off by default: LangChain (JS and Python) turns a resource_link into a URL file block that OpenAI chat models refuse, aborting the agent run; elsewhere links are only shown as text or dropped.
    resourceLinks: readBoolean(env, "STORE_RESOURCE_LINKS", false, errors),
    buckets,
  };
}

/** Timeouts, retries, the call budget, jobs per caller, a query's spill and the multipart copy threshold. */
function readLimits(cli: CliOptions, env: Env, errors: string[]) {
  const spillMb = envValue(env, "STORE_QUERY_SPILL_MB") && readPositiveInt(env, "STORE_QUERY_SPILL_MB", 1, errors);
  return {
    connectTimeoutMs: readPositiveInt(env, "STORE_CONNECT_TIMEOUT_MS", 5_000, errors),
    requestTimeoutMs: readPositiveInt(env, "STORE_REQUEST_TIMEOUT_MS", 60_000, errors),
    operationTimeoutMs: readPositiveInt(env, "STORE_OPERATION_TIMEOUT_MS", DEFAULT_OPERATION_TIMEOUT_MS, errors),
    callBudgetSeconds: readCallBudget(cli.callBudget ?? envValue(env, "STORE_CALL_BUDGET_SECONDS"), errors),
    maxRunningJobs: readMaxRunningJobs(envValue(env, "STORE_MAX_RUNNING_JOBS"), errors),
    ...(spillMb ? { querySpillBytes: spillMb * 1024 * 1024 } : {}),
    multipartCopyThreshold: Math.min(
      readPositiveInt(env, "STORE_MULTIPART_COPY_THRESHOLD", 5 * 1024 ** 3, errors),
      5 * 1024 ** 3,
    ),
    maxAttempts: readPositiveInt(env, "STORE_MAX_ATTEMPTS", 3, errors),
  };
}

/** STORE_ALLOWED_DIRS is a path list like PATH: ":"-separated, ";" on Windows. */
const pathListSeparator = process.platform === "win32" ? ";" : ":";
