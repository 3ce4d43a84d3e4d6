import { type ConsolaInstance, createConsola } from "consola/basic";
import { scrubSecrets } from "./redact.ts";

/** Our log target in env_logger-style directives (`store_mcp_server=debug`). */
export const LOG_TARGET = "store_mcp_server";
export const DEFAULT_LOG_DIRECTIVE = `${LOG_TARGET}=info`;

export const LOG_LEVELS = ["off", "error", "warn", "info", "debug", "trace"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

// consola's numeric levels for each of ours.
const CONSOLA_LEVEL: Record<LogLevel, number> = {
  off: Number.NEGATIVE_INFINITY,
  error: 0,
  warn: 1,
  info: 3,
  debug: 4,
  trace: 5,
};

export type Logger = ConsolaInstance;

function asLevel(word: string): LogLevel | undefined {
  const lower = word.trim().toLowerCase();
  return (LOG_LEVELS as readonly string[]).includes(lower) ? (lower as LogLevel) : undefined;
}

/**
 * Reads an env_logger-style filter (`debug`, `store_mcp_server=debug`,
 * `warn,store_mcp_server=trace`, `off`) and returns the level that applies to us.
 * A directive naming our target (or a module below it, `store_mcp_server::tools`)
 * beats a bare level; directives for other targets are checked and ignored.
 */
export function parseLogDirectives(spec: string): { level: LogLevel } | { error: string } {
  let bare: LogLevel | undefined;
  let ours: LogLevel | undefined;
  for (const raw of spec.split(",")) {
    const directive = raw.trim();
    if (directive === "") continue;
    const eq = directive.indexOf("=");
    if (eq === -1) {
      // A bare word is a level, or our own target name (env_logger: all of it).
      // Any other bare word is far more likely a mistyped level than a target.
      const level = asLevel(directive);
      if (level) bare = level;
      else if (isOurTarget(directive)) ours = "trace";
      else return { error: badDirective(directive) };
      continue;
    }
    const target = directive.slice(0, eq).trim();
    const level = asLevel(directive.slice(eq + 1).split("/")[0] ?? "");
    if (!level || target === "") return { error: badDirective(directive) };
    if (isOurTarget(target)) ours = level;
  }
  return { level: ours ?? bare ?? "error" };
}

function isOurTarget(target: string): boolean {
  const normalized = target.replaceAll("-", "_");
  return normalized === LOG_TARGET || normalized.startsWith(`${LOG_TARGET}::`);
}

function badDirective(directive: string): string {
  return `log level "${directive}" is not understood: use one of ${LOG_LEVELS.join(", ")}, optionally as ${LOG_TARGET}=LEVEL (e.g. "debug" or "warn,${LOG_TARGET}=debug")`;
}

/** stderr, with every line scrubbed of registered secrets on its way out. */
const scrubbedStderr = {
  write: (text: string) => process.stderr.write(scrubSecrets(String(text))),
} as unknown as NodeJS.WriteStream;

/** A logger that writes only to stderr (stdout carries the MCP protocol), never a secret. */
export function createLogger(level: LogLevel): Logger {
  return createConsola({
    level: CONSOLA_LEVEL[level],
    stdout: scrubbedStderr,
    stderr: scrubbedStderr,
    formatOptions: { date: true, colors: false, compact: true },
  });
}
