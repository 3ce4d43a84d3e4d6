/** The command-line options, shared by the server and `doctor`: citty parses them, scanRawArgs checks what citty does not. */

import { DEFAULT_LOG_DIRECTIVE } from "../runtime/log.ts";
import type { CliOptions } from "./config.ts";

export const ARGS = {
  "access-key-id": {
    type: "string",
    description: "Access key ID for storage authentication (env STORE_ACCESS_KEY_ID)",
  },
  "secret-access-key": {
    type: "string",
    description: "Secret access key (env STORE_SECRET_ACCESS_KEY; prefer the env, argv is visible to other users)",
  },
  "session-token": { type: "string", description: "Session token for temporary credentials (env STORE_SESSION_TOKEN)" },
  region: { type: "string", description: "Region for storage operations (env STORE_REGION; default us-east-1)" },
  "endpoint-url": {
    type: "string",
    description: "Custom endpoint URL for S3-compatible stores (env STORE_ENDPOINT_URL)",
  },
  "log-level": {
    type: "string",
    description: `Log level or env_logger-style filter (env RUST_LOG; default ${DEFAULT_LOG_DIRECTIVE})`,
  },
  "allowed-dir": {
    type: "string",
    description: "A local directory tools may read and write; repeatable (env STORE_ALLOWED_DIRS)",
  },
  "read-only": { type: "boolean", description: "Offer only tools that do not change the store (env STORE_READ_ONLY)" },
  bucket: { type: "string", description: "Limit every tool to this bucket; repeatable (env STORE_BUCKETS)" },
  "allow-delete": { type: "boolean", description: "Offer delete_object and delete_objects (env STORE_ALLOW_DELETE)" },
  "allow-admin": {
    type: "boolean",
    description: "Offer the tools that change bucket settings and object tags (env STORE_ALLOW_ADMIN)",
  },
  tools: {
    type: "string",
    description: "Offer only these tools: comma list of names or groups read, write, delete, admin (env STORE_TOOLS)",
  },
  profile: {
    type: "string",
    description:
      "An AWS profile (~/.aws/config) to offer as a store of its name; repeatable (env STORE_PROFILES, * for all)",
  },
  "allow-broad-dirs": {
    type: "boolean",
    description:
      "Allow / , the home directory, its ancestors and system directories as allowed dirs (env STORE_ALLOW_BROAD_DIRS)",
  },
  "sts-role-arn": {
    type: "string",
    description:
      "HTTP mode with OAuth: run each caller's calls with store credentials for this role, exchanged for their token (AssumeRoleWithWebIdentity; env STORE_STS_ROLE_ARN)",
  },
  policy: {
    type: "string",
    description:
      "HTTP mode: a per-caller policy file, YAML or JSON; reloaded on SIGHUP and on change (env STORE_POLICY)",
  },
  "audit-log": {
    type: "string",
    description:
      "Append one JSON line per tool call and resource read to this file, or - for stderr (env STORE_AUDIT_LOG)",
  },
  "audit-required": {
    type: "boolean",
    description: "Refuse calls while the audit log cannot be written (env STORE_AUDIT_REQUIRED)",
  },
  "call-budget": {
    type: "string",
    description:
      "Seconds a long call runs before it answers with a job handle (job_status gets the result); 0 never (env STORE_CALL_BUDGET_SECONDS; default 45)",
  },
  "state-dir": {
    type: "string",
    description:
      "Where transfers cut short are recorded so the next call resumes them; off keeps none (env STORE_STATE_DIR; default the user's state directory)",
  },
  transport: {
    type: "string",
    description: "stdio (default) or http: remote mode, MCP Streamable HTTP at /mcp (env STORE_TRANSPORT)",
  },
  listen: {
    type: "string",
    description: "HTTP mode: HOST:PORT to listen on (env STORE_LISTEN; default 127.0.0.1:8787)",
  },
  "resource-url": {
    type: "string",
    description: "HTTP mode: the public URL of /mcp as clients reach it (env STORE_RESOURCE_URL)",
  },
  "state-url": {
    type: "string",
    description:
      "HTTP mode: a Redis or Valkey every replica shares, redis://[user:password@]host:port[/db] (rediss:// for TLS): per-caller limits count there and jobs are shared there (env STORE_STATE_URL; prefer it for a password)",
  },
  "oauth-issuer": {
    type: "string",
    description: "HTTP mode: accept JWT access tokens from this OAuth/OIDC issuer (env STORE_OAUTH_ISSUER)",
  },
  "oauth-audience": {
    type: "string",
    description: "HTTP mode: the aud tokens must carry (env STORE_OAUTH_AUDIENCE; default the resource URL)",
  },
  "oauth-jwks-url": {
    type: "string",
    description: "HTTP mode: the issuer's JWKS URL (env STORE_OAUTH_JWKS_URL; default from its metadata)",
  },
  "allowed-host": {
    type: "string",
    description:
      "HTTP mode: a Host header to accept besides localhost and the listen address; repeatable (env STORE_ALLOWED_HOSTS)",
  },
  "allowed-origin": {
    type: "string",
    description: "HTTP mode: a browser Origin to accept, with CORS; repeatable (env STORE_ALLOWED_ORIGINS)",
  },
} as const;

const REPEATABLE = new Set(["allowed-dir", "bucket", "profile", "allowed-host", "allowed-origin"]);

/** Options citty does not check: unknown names, and every value of the repeatable ones. */
export function scanRawArgs(
  rawArgs: string[],
  argDefs: Record<string, { type: string }> = ARGS,
): { repeated: Map<string, string[]>; errors: string[] } {
  const known = new Set([...Object.keys(argDefs), "help", "version"]);
  const repeated = new Map<string, string[]>();
  const errors: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (!arg.startsWith("-")) {
      // Not echoed: a stray value is often a secret that lost its option name.
      errors.push(
        `unexpected argument #${i + 1} (its value is not shown); this command takes only options (see --help).`,
      );
      continue;
    }
    const [flag, inline] = arg.replace(/^--?/, "").split(/=(.*)/s, 2) as [string, string | undefined];
    const name = flag.replace(/^no-/, "");
    if (!known.has(name) && name !== "h" && name !== "v") {
      errors.push(`unknown option "--${flag}" (see --help for the options).`);
      continue;
    }
    const def = argDefs[name];
    if (def?.type !== "string") continue;
    const value = inline ?? rawArgs[i + 1];
    if (inline === undefined) i++;
    if (value === undefined || (inline === undefined && value.startsWith("--"))) {
      errors.push(`option --${name} needs a value.`);
      if (value?.startsWith("--")) i--;
      continue;
    }
    if (REPEATABLE.has(name) && value.trim() === "") {
      errors.push(
        `option --${name} was given an empty value (an unset variable in the client's configuration?); name a directory or leave the option out.`,
      );
      continue;
    }
    if (REPEATABLE.has(name)) repeated.set(name, [...(repeated.get(name) ?? []), value]);
  }
  return { repeated, errors };
}

/** The options as given; `errors` are those citty does not report (unknown names, stray values, empty repeatables). */
export function cliOptionsFrom(
  rawArgs: string[],
  args: Record<string, unknown>,
  argDefs: Record<string, { type: string }> = ARGS,
): { cli: CliOptions; errors: string[] } {
  const scan = scanRawArgs(rawArgs, argDefs);
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
    allowAdmin: args["allow-admin"] === true,
    tools: str("tools"),
    profiles: scan.repeated.get("profile"),
    auditLog: str("audit-log"),
    auditRequired: args["audit-required"] === true,
    callBudget: str("call-budget"),
    stateDir: str("state-dir"),
    policy: str("policy"),
    stsRoleArn: str("sts-role-arn"),
    transport: str("transport"),
    listen: str("listen"),
    resourceUrl: str("resource-url"),
    stateUrl: str("state-url"),
    oauthIssuer: str("oauth-issuer"),
    oauthAudience: str("oauth-audience"),
    oauthJwksUrl: str("oauth-jwks-url"),
    allowedHosts: scan.repeated.get("allowed-host"),
    allowedOrigins: scan.repeated.get("allowed-origin"),
  };
  return { cli, errors: scan.errors };
}
