/** What the configuration may show in a log: a summary with no secret, the access key id shortened. */

import { maskUrlValue } from "../runtime/redact.ts";
import type { Config } from "./config-types.ts";

/** The access key id as it may appear in logs: its last four characters only. */
export function redactKeyId(keyId: string): string {
  return `…${keyId.slice(-4)}`;
}

/** A log-safe summary of the configuration: no secret, the key id shortened. */
export function describeConfig(config: Config): Record<string, unknown> {
  return {
    credentials: config.credentials
      ? `${config.credentialSource}, key ${redactKeyId(config.credentials.accessKeyId)}`
      : config.credentialSource,
    region: config.region,
    endpoint: config.endpointUrl ?? "AWS S3",
    forcePathStyle: config.forcePathStyle,
    checksums: config.checksums,
    logLevel: config.logLevel,
    ...(config.readOnly ? { readOnly: true } : {}),
    ...(config.allowDelete ? { allowDelete: true } : {}),
    ...(config.allowAdmin ? { allowAdmin: true } : {}),
    ...(config.tools.length ? { tools: config.tools } : {}),
    ...(config.buckets.length ? { buckets: config.buckets } : {}),
    ...(config.allowedDirs.length ? { allowedDirs: config.allowedDirs } : {}),
    ...(config.auditLog ? { auditLog: config.auditLog } : {}),
    ...(config.auditRequired ? { auditRequired: true } : {}),
    stateDir: config.stateDir ?? "off",
    ...(config.policy ? { policy: config.policy } : {}),
    ...(config.passThrough
      ? { passThrough: `STS role ${config.passThrough.roleArn} at ${config.passThrough.endpoint ?? "AWS STS"}` }
      : {}),
    ...(config.stores.length > 1
      ? {
          stores: config.stores.map(
            (s) =>
              `${s.name}: ${s.endpointUrl ?? "AWS S3"} ${s.region}, ${s.credentials ? `${s.credentialSource}, key ${redactKeyId(s.credentials.accessKeyId)}` : s.credentialSource}${s.readOnly ? ", read-only" : ""}${s.allowDelete ? ", deletes" : ""}${s.buckets.length ? `, buckets ${s.buckets.join(" ")}` : ""}`,
          ),
        }
      : {}),
    ...(config.metricsListen ? { metrics: `${config.metricsListen.host}:${config.metricsListen.port}/metrics` } : {}),
    ...(config.http
      ? {
          transport: "http",
          listen: `${config.http.host}:${config.http.port}`,
          resourceUrl: config.http.resourceUrl,
          ...(config.http.stateUrl ? { stateUrl: maskUrlValue(config.http.stateUrl) } : {}),
          auth:
            [
              config.http.tokens.length
                ? `${config.http.tokens.length} static token(s): ${config.http.tokens.map((t) => t.label).join(", ")}`
                : "",
              config.http.oauth
                ? `OAuth issuer ${config.http.oauth.issuer}, audience ${config.http.oauth.audience}`
                : "",
            ]
              .filter(Boolean)
              .join("; ") || "none (loopback only)",
        }
      : {}),
  };
}
