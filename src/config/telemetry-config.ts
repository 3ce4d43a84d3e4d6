/**
 * What the operator asked the server to tell their dashboards: STORE_METRICS_LISTEN (Prometheus's /metrics) and
 * OpenTelemetry's own variables for OTLP (an endpoint, a signal's exporter turned off, the metric interval).
 * Read with the rest of the configuration, every problem reported at once.
 */
import type { Config } from "./config-types.ts";
import { type Env, envValue } from "./env-values.ts";
import { parseListen } from "./http-config.ts";

export function readTelemetry(env: Env, errors: string[]): Pick<Config, "metricsListen" | "traces" | "otlpMetrics"> {
  const metricsRaw = envValue(env, "STORE_METRICS_LISTEN")?.trim();
  const metricsListen = metricsRaw
    ? parseListen(metricsRaw, errors, { label: "STORE_METRICS_LISTEN", example: "9464", names: "STORE_METRICS_LISTEN" })
    : undefined;
  return {
    ...(metricsListen ? { metricsListen } : {}),
    ...(otlpWanted(env, "TRACES") ? { traces: true } : {}),
    ...(otlpWanted(env, "METRICS") ? { otlpMetrics: { everyMs: metricInterval(env, errors) } } : {}),
  };
}

/** Whether OpenTelemetry's variables ask for traces or metrics over OTLP: an endpoint, and neither the SDK nor that exporter off. */
function otlpWanted(env: Env, signal: "TRACES" | "METRICS"): boolean {
  const endpoint =
    envValue(env, `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`)?.trim() ||
    envValue(env, "OTEL_EXPORTER_OTLP_ENDPOINT")?.trim();
  return (
    Boolean(endpoint) &&
    envValue(env, "OTEL_SDK_DISABLED")?.trim().toLowerCase() !== "true" &&
    envValue(env, `OTEL_${signal}_EXPORTER`)?.trim().toLowerCase() !== "none"
  );
}

/** OTEL_METRIC_EXPORT_INTERVAL: ms between OTLP metric pushes (the specification's default, 60 s). */
function metricInterval(env: Env, errors: string[]): number {
  const raw = envValue(env, "OTEL_METRIC_EXPORT_INTERVAL")?.trim();
  if (!raw) return 60_000;
  const ms = Number(raw);
  if (Number.isInteger(ms) && ms >= 100) return ms;
  errors.push(`OTEL_METRIC_EXPORT_INTERVAL: "${raw}" must be a whole number of milliseconds, at least 100.`);
  return 60_000;
}
