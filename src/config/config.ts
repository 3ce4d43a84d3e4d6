import { DEFAULT_LOG_DIRECTIVE, parseLogDirectives } from "../runtime/log.ts";
import { stateDirFrom } from "../runtime/state-dir.ts";
import type { ChecksumMode, CliOptions, Config, StaticCredentials, StoreSettings } from "./config-types.ts";
import { readDeployment } from "./deployment-config.ts";
import { readStoreEncryption } from "./encryption-config.ts";
import { checkEndpoint } from "./endpoint-url.ts";
import { type Env, envValue, readBoolean, readPositiveInt, splitList } from "./env-values.ts";
import { isLoopback, readTransport, resolveHttpConfig } from "./http-config.ts";
import { connectionDefaults, readProvider } from "./store-provider.ts";
import { DEFAULT_STORE, namedStores } from "./stores-config.ts";
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

export const DEFAULT_REGION = "us-east-1";
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
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a known exception (docs/architecture.md), to be split into named steps
export function resolveConfig(cli: CliOptions, env: Env): ConfigResult {
  const errors: string[] = [];
  const warnings: string[] = [];

  // Credentials: each field from the option, else its STORE_* variable; with
  // neither key given, the AWS SDK's default chain (AWS_*, profiles, SSO, roles).
  const accessKeyId = firstGiven(cli.accessKeyId, envValue(env, "STORE_ACCESS_KEY_ID"));
  const secretAccessKey = firstGiven(cli.secretAccessKey, envValue(env, "STORE_SECRET_ACCESS_KEY"));
  const sessionToken = firstGiven(cli.sessionToken, envValue(env, "STORE_SESSION_TOKEN"));
  let credentials: StaticCredentials | undefined;
  let credentialSource =
    "AWS default credential chain (AWS_* variables, AWS_PROFILE, SSO, web identity, container or instance role)";
  if (accessKeyId && secretAccessKey) {
    credentials = { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
    credentialSource = cli.accessKeyId || cli.secretAccessKey ? "command line" : "STORE_* environment variables";
  } else if (accessKeyId || secretAccessKey) {
    const missing = accessKeyId
      ? "secret access key (--secret-access-key or STORE_SECRET_ACCESS_KEY)"
      : "access key id (--access-key-id or STORE_ACCESS_KEY_ID)";
    errors.push(
      `credentials: only half of a key pair was given; the ${missing} is missing. Give both, or neither to use the AWS default credential chain.`,
    );
  } else if (sessionToken) {
    errors.push(
      "credentials: a session token was given without an access key id and secret access key; give all three.",
    );
  }
  if (cli.secretAccessKey) {
    warnings.push(
      "the secret access key was given on the command line, where other users can see it in the process list; pass it as STORE_SECRET_ACCESS_KEY in the client's env map instead.",
    );
  }
  if (cli.sessionToken) {
    warnings.push(
      "the session token was given on the command line, where other users can see it in the process list; pass it as STORE_SESSION_TOKEN instead.",
    );
  }

  const region =
    firstGiven(
      cli.region,
      envValue(env, "STORE_REGION"),
      envValue(env, "AWS_REGION"),
      envValue(env, "AWS_DEFAULT_REGION"),
    ) ?? DEFAULT_REGION;
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/i.test(region)) {
    errors.push(
      `region: "${region}" is not a region name (letters, digits and hyphens, e.g. us-east-1, eu-central-1, auto).`,
    );
  }

  const endpointRaw = firstGiven(cli.endpointUrl, envValue(env, "STORE_ENDPOINT_URL"));
  const endpointUrl = endpointRaw === undefined ? undefined : checkEndpoint(endpointRaw.trim(), errors);

  const connection = connectionDefaults(endpointRaw);
  const forcePathStyle = readBoolean(env, "STORE_FORCE_PATH_STYLE", connection.forcePathStyle, errors);
  const provider = readProvider(envValue(env, "STORE_PROVIDER"), endpointUrl, errors, "STORE_PROVIDER");
  const checksums = readChecksumMode(env, connection.checksums, errors);
  const atRest = readStoreEncryption(
    (v) => envValue(env, `STORE_${v}`),
    (v) => `STORE_${v}`,
    errors,
  );
  const connectTimeoutMs = readPositiveInt(env, "STORE_CONNECT_TIMEOUT_MS", 5_000, errors);
  const requestTimeoutMs = readPositiveInt(env, "STORE_REQUEST_TIMEOUT_MS", 60_000, errors);
  const maxAttempts = readPositiveInt(env, "STORE_MAX_ATTEMPTS", 3, errors);
  const operationTimeoutMs = readPositiveInt(env, "STORE_OPERATION_TIMEOUT_MS", DEFAULT_OPERATION_TIMEOUT_MS, errors);
  const stateDir = stateDirFrom({ ...env, ...(cli.stateDir !== undefined ? { STORE_STATE_DIR: cli.stateDir } : {}) });
  const callBudgetSeconds = readCallBudget(cli.callBudget ?? envValue(env, "STORE_CALL_BUDGET_SECONDS"), errors);
  const maxRunningJobs = readMaxRunningJobs(envValue(env, "STORE_MAX_RUNNING_JOBS"), errors);
  const spillMb = envValue(env, "STORE_QUERY_SPILL_MB") && readPositiveInt(env, "STORE_QUERY_SPILL_MB", 1, errors);
  const multipartCopyThreshold = Math.min(
    readPositiveInt(env, "STORE_MULTIPART_COPY_THRESHOLD", 5 * 1024 ** 3, errors),
    5 * 1024 ** 3,
  );

  const directive = firstGiven(cli.logLevel, envValue(env, "RUST_LOG")) ?? DEFAULT_LOG_DIRECTIVE;
  const parsed = parseLogDirectives(directive);
  if ("error" in parsed) errors.push(`log level: ${parsed.error}`);

  const allowedDirs = cli.allowedDirs?.length
    ? cli.allowedDirs
    : splitList(envValue(env, "STORE_ALLOWED_DIRS"), pathListSeparator);
  const readOnly = cli.readOnly || readBoolean(env, "STORE_READ_ONLY", false, errors);
  const allowBroadDirs = cli.allowBroadDirs || readBoolean(env, "STORE_ALLOW_BROAD_DIRS", false, errors);
  const allowDelete = cli.allowDelete || readBoolean(env, "STORE_ALLOW_DELETE", false, errors);
  const allowAdmin = cli.allowAdmin || readBoolean(env, "STORE_ALLOW_ADMIN", false, errors);
  // Off by default: LangChain (JS and Python) turns a resource_link into a URL file block that OpenAI chat models refuse, aborting the agent run; elsewhere links are only shown as text or dropped.
  const resourceLinks = readBoolean(env, "STORE_RESOURCE_LINKS", false, errors);
  const tools = splitList(firstGiven(cli.tools, envValue(env, "STORE_TOOLS")), ",");
  const buckets = cli.buckets?.length ? cli.buckets : splitList(envValue(env, "STORE_BUCKETS"), ",");
  for (const bucket of buckets) {
    if (!/^[A-Za-z0-9._-]{1,255}$/.test(bucket)) errors.push(`bucket allowlist: "${bucket}" is not a bucket name.`);
  }

  const transport = readTransport(cli, env, errors);
  const { auditLog, auditRequired, policy, passThrough } = readDeployment(cli, env, transport, errors);
  const http = transport === "http" ? resolveHttpConfig(cli, env, errors) : undefined;
  const telemetry = readTelemetry(env, errors);

  const named = namedStores(
    cli.profiles?.length ? cli.profiles : splitList(envValue(env, "STORE_PROFILES"), ","),
    env,
    {
      readOnly,
      allowDelete,
      checkEndpoint: (raw, errs, label) => {
        const own: string[] = [];
        const url = checkEndpoint(raw, own);
        errs.push(...own.map((e) => `${label}: ${e}`));
        return url;
      },
      checkRegion: (value, errs, label) => {
        if (!/^[a-z0-9][a-z0-9-]{0,62}$/i.test(value)) errs.push(`${label}: region "${value}" is not a region name.`);
      },
    },
    errors,
  );
  const defaultStore: StoreSettings = {
    name: DEFAULT_STORE,
    credentials,
    credentialSource,
    region,
    endpointUrl,
    forcePathStyle,
    checksums,
    provider,
    readOnly,
    allowDelete,
    buckets,
    ...atRest,
  };
  // The single-store settings make the store "default"; when they say nothing, the first named store is the default.
  const singleGiven =
    [cli.accessKeyId, cli.secretAccessKey, cli.sessionToken, cli.region, cli.endpointUrl].some(
      (v) => v !== undefined && v.trim() !== "",
    ) ||
    [
      "STORE_ACCESS_KEY_ID",
      "STORE_SECRET_ACCESS_KEY",
      "STORE_SESSION_TOKEN",
      "STORE_REGION",
      "STORE_ENDPOINT_URL",
    ].some((v) => envValue(env, v) !== undefined);
  const stores =
    named.length > 0 && !singleGiven
      ? [{ ...named[0]!, buckets: buckets.length > 0 ? buckets : named[0]!.buckets }, ...named.slice(1)]
      : [defaultStore, ...named];
  const first = stores[0]!;
  for (const store of stores) if (store.customerKey) checkCustomerKeyTransport(store, errors);

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
      connectTimeoutMs,
      requestTimeoutMs,
      operationTimeoutMs,
      callBudgetSeconds,
      maxRunningJobs,
      ...(spillMb ? { querySpillBytes: spillMb * 1024 * 1024 } : {}),
      multipartCopyThreshold,
      maxAttempts,
      logLevel: "level" in parsed ? parsed.level : "info",
      allowedDirs,
      readOnly,
      buckets: first.buckets,
      allowBroadDirs,
      allowDelete,
      allowAdmin,
      tools,
      resourceLinks,
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

/** STORE_ALLOWED_DIRS is a path list like PATH: ":"-separated, ";" on Windows. */
const pathListSeparator = process.platform === "win32" ? ";" : ":";

function readChecksumMode(env: Env, fallback: ChecksumMode, errors: string[]): ChecksumMode {
  const value = envValue(env, "STORE_CHECKSUMS")?.trim().toLowerCase();
  if (value === undefined) return fallback;
  if (value === "when_required") return "WHEN_REQUIRED";
  if (value === "when_supported") return "WHEN_SUPPORTED";
  errors.push(`STORE_CHECKSUMS: "${value}" must be when_required or when_supported.`);
  return fallback;
}

/**
 * An SSE-C key goes with every object request of its store, in headers: over plain HTTP it would cross the network in
 * clear, so only a loopback endpoint (a store on this machine) may be http://.
 */
function checkCustomerKeyTransport(store: { name: string; endpointUrl?: string | undefined }, errors: string[]): void {
  if (!store.endpointUrl) return;
  let url: URL;
  try {
    url = new URL(store.endpointUrl);
  } catch {
    return; // the endpoint's own check says what is wrong with it
  }
  if (url.protocol !== "http:" || isLoopback(url.hostname)) return;
  errors.push(
    `store ${store.name}: an SSE-C key (STORE_SSE_C_KEY) is set with the plain-HTTP endpoint ${url.origin}, which would send the key in clear with every request. Use the store's https:// endpoint (plain http:// is allowed only on loopback).`,
  );
}
