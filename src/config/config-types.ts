import type { StoreProvider } from "./store-provider.ts";
/**
 * The configuration's types, apart from the code that reads them: config.ts,
 * stores-config.ts and deployment-config.ts all build parts of a Config, and
 * each takes its types from here rather than from another (no circle).
 */

import type { LogLevel } from "../runtime/log.ts";
import type { CustomerKey, WriteEncryption } from "./encryption-config.ts";
import type { HttpCliOptions, HttpConfig, Transport } from "./http-config.ts";

/** Options as they came from the command line (undefined = not given). */
export interface CliOptions extends HttpCliOptions {
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  region?: string;
  endpointUrl?: string;
  logLevel?: string;
  /** Repeatable --allowed-dir. */
  allowedDirs?: string[];
  readOnly?: boolean;
  /** Repeatable --bucket. */
  buckets?: string[];
  allowBroadDirs?: boolean;
  allowDelete?: boolean;
  allowAdmin?: boolean;
  /** --tools, as given: a comma list of tool names and groups. */
  tools?: string;
  /** Repeatable --profile: AWS profiles that become stores of their names. */
  profiles?: string[];
  /** --audit-log FILE, or - for stderr. */
  auditLog?: string;
  auditRequired?: boolean;
  /** --policy FILE. */
  policy?: string;
  /** --sts-role-arn ARN. */
  stsRoleArn?: string;
  /** --call-budget SECONDS, as given. */
  callBudget?: string;
  /** --state-dir DIR, or off. */
  stateDir?: string;
}

export type ChecksumMode = "WHEN_REQUIRED" | "WHEN_SUPPORTED";

export interface StaticCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** One store's connection and its own policy. */
export interface StoreSettings {
  name: string;
  credentials: StaticCredentials | undefined;
  credentialSource: string;
  /** The AWS profile whose credentials the SDK resolves (profile stores). */
  profile?: string;
  region: string;
  endpointUrl: string | undefined;
  forcePathStyle: boolean;
  checksums: ChecksumMode;
  /** Which S3 implementation it is (store-provider.ts), for what it does differently (storage/quirks.ts). */
  provider: StoreProvider;
  readOnly: boolean;
  allowDelete: boolean;
  buckets: string[];
  /** How writes are encrypted when the call does not say (STORE_SSE…); absent: the bucket's default. */
  encryption?: WriteEncryption;
  /** SSE-C: the customer key every object request of this store carries (STORE_SSE_C_KEY…). */
  customerKey?: CustomerKey;
}

/** Everything the server needs, validated. Secrets live only in `credentials` (and each store's). */
export interface Config {
  /**
   * Every store, the default first (stores-config.ts). The connection fields
   * below are the default store's, so code that knows one store (the doctor,
   * a single-store server) reads them as before.
   */
  stores: StoreSettings[];
  /** The AWS profile the default store's credentials come from, when it is a profile store. */
  profile?: string;
  /** Undefined: the AWS SDK's default credential chain decides. */
  credentials: StaticCredentials | undefined;
  /** Credentials made per caller (identity pass-through, access/pass-through.ts); when set, used instead of `credentials`. */
  credentialProvider?: () => Promise<StaticCredentials & { expiration?: Date }>;
  /** --sts-role-arn: identity pass-through settings (remote mode with OAuth). */
  passThrough?: { roleArn: string; endpoint: string | undefined; durationSeconds: number };
  credentialSource: string;
  region: string;
  endpointUrl: string | undefined;
  forcePathStyle: boolean;
  checksums: ChecksumMode;
  /** The default store's provider (store-provider.ts). */
  provider: StoreProvider;
  /** The default store's write encryption (each store's is in `stores`). */
  encryption?: WriteEncryption;
  /** The default store's SSE-C key (each store's is in `stores`). */
  customerKey?: CustomerKey;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  /** How long a long call runs before it answers with a job handle (--call-budget); 0: never. */
  callBudgetSeconds: number;
  /** STORE_QUERY_SPILL_MB, in bytes: the most one query may spill to its directory; absent: the default (content/query/spill.ts). */
  querySpillBytes?: number;
  /** Jobs one caller may have running at once (STORE_MAX_RUNNING_JOBS). */
  maxRunningJobs: number;
  /** The overall deadline of a call that is not a streaming transfer, retries included. */
  operationTimeoutMs: number;
  /** Objects larger than this are copied in parts (UploadPartCopy); S3 allows one CopyObject up to 5 GiB. */
  multipartCopyThreshold: number;
  maxAttempts: number;
  logLevel: LogLevel;
  /** As given (not yet resolved against the filesystem). */
  allowedDirs: string[];
  readOnly: boolean;
  buckets: string[];
  /** The operator's opt-in to allowed dirs that are /, home, its ancestors or system directories. */
  allowBroadDirs: boolean;
  /** Register the tools that delete objects (--allow-delete). */
  allowDelete: boolean;
  /** Register the tools that change bucket settings and object tags (--allow-admin). */
  allowAdmin: boolean;
  /** Tool names and groups to offer; empty: all (checked against the tool list by the CLI). */
  tools: string[];
  /** resource_link items in list_objects and truncated reads (STORE_RESOURCE_LINKS). */
  resourceLinks: boolean;
  /** --audit-log: a file to append a JSON line per call to, or "-" for stderr. */
  auditLog?: string;
  /** --audit-required: calls are refused while the audit log cannot be written. */
  auditRequired?: boolean;
  /** Where transfers cut short are recorded to resume (runtime/kept-transfers.ts); undefined: nothing is kept. */
  stateDir?: string;
  /** --policy: the per-caller policy file (remote mode). */
  policy?: string;
  transport: Transport;
  /** The remote mode's settings, with --transport http. */
  http?: HttpConfig;
  /** STORE_METRICS_LISTEN: where Prometheus scrapes /metrics (transports/telemetry/metrics.ts); absent: no metrics. */
  metricsListen?: { host: string; port: number };
  /** An OTLP endpoint in OpenTelemetry's variables, neither the SDK nor the traces exporter off: traces (traces.ts). */
  traces?: boolean;
  /** The same for metrics, pushed every OTEL_METRIC_EXPORT_INTERVAL ms (default 60 s): metrics.ts. */
  otlpMetrics?: { everyMs: number };
}
