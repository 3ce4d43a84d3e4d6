/**
 * The settings of a team deployment (remote mode): the audit log, the
 * per-caller policy file and identity pass-through (STS). Read with the rest
 * of the configuration (config.ts); problems go to the same list.
 */
import type { CliOptions } from "./config-types.ts";
import { checkEndpoint } from "./endpoint-url.ts";
import type { Env } from "./env-values.ts";
import { envValue, readBoolean, readPositiveInt } from "./env-values.ts";
import type { Transport } from "./http-config.ts";

export interface PassThroughConfig {
  roleArn: string;
  endpoint: string | undefined;
  durationSeconds: number;
}

const given = (...values: (string | undefined)[]) => values.find((v) => v !== undefined && v.trim() !== "")?.trim();

export function readDeployment(
  cli: CliOptions,
  env: Env,
  transport: Transport,
  errors: string[],
): { auditLog?: string; auditRequired?: boolean; policy?: string; passThrough?: PassThroughConfig } {
  const auditLog = given(cli.auditLog, envValue(env, "STORE_AUDIT_LOG"));
  const auditRequired = cli.auditRequired === true || readBoolean(env, "STORE_AUDIT_REQUIRED", false, errors);
  if (auditRequired && (!auditLog || auditLog === "-"))
    errors.push(
      "audit required (--audit-required / STORE_AUDIT_REQUIRED): give an audit log file (--audit-log FILE / STORE_AUDIT_LOG); stderr cannot tell the server when it fails.",
    );
  const policy = given(cli.policy, envValue(env, "STORE_POLICY"));
  if (policy && transport !== "http")
    errors.push(
      "policy: a per-caller policy applies to remote mode (--transport http); over stdio the one local user has the server's own permissions.",
    );
  const passThrough = readPassThrough(cli, env, transport, errors);
  return {
    ...(auditLog ? { auditLog } : {}),
    ...(auditRequired ? { auditRequired } : {}),
    ...(policy ? { policy } : {}),
    ...(passThrough ? { passThrough } : {}),
  };
}

/** Identity pass-through: needs remote mode with OAuth (a caller's access token is what STS exchanges). */
function readPassThrough(
  cli: CliOptions,
  env: Env,
  transport: Transport,
  errors: string[],
): PassThroughConfig | undefined {
  const roleArn = given(cli.stsRoleArn, envValue(env, "STORE_STS_ROLE_ARN"));
  if (!roleArn) return undefined;
  if (!/^arn:[\w-]+:iam::\d*:role\/[\w+=,.@/-]+$/.test(roleArn))
    errors.push(`sts role ARN: "${roleArn}" is not a role ARN (arn:aws:iam::ACCOUNT:role/NAME).`);
  if (transport !== "http" || !(cli.oauthIssuer ?? envValue(env, "STORE_OAUTH_ISSUER")))
    errors.push(
      "sts role ARN: identity pass-through exchanges each caller's OAuth access token, so it needs remote mode with --oauth-issuer.",
    );
  const rawEndpoint = envValue(env, "STORE_STS_ENDPOINT_URL")?.trim();
  const endpoint = rawEndpoint === undefined ? undefined : checkEndpoint(rawEndpoint, errors);
  const durationSeconds = readPositiveInt(env, "STORE_STS_DURATION_SECONDS", 900, errors);
  return { roleArn, endpoint, durationSeconds };
}
