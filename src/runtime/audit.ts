/**
 * The audit log (--audit-log FILE, or - for stderr): one JSON line per tool
 * call and resource read, saying who did what to which object and how it
 * ended. Never content, a secret or a token: only the names a call was
 * given (bucket, key, prefix, store), counts and times. Each line is one
 * write(2) on a descriptor opened for appending, so replicas may share one
 * file on a volume without tearing lines; `reopen` (SIGHUP) follows a log
 * rotation. A key is JSON-escaped, and so are U+2028/U+2029: no key can end
 * a line or forge another. Every field is bounded (what a refused call
 * names was never validated) and so is the whole line, so a few requests
 * cannot fill the disk and leave later calls unaudited; where the audit is
 * a control (--audit-required), calls are refused while it cannot be written.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { ActionableError } from "./errors.ts";

export interface AuditEntry {
  /** Who called (auth/caller-id.ts): label:NAME for a static token, sub:ID or client_id:ID for a JWT, "anonymous", or "local" (stdio). */
  caller: string;
  /** The tool, or "resources/read". */
  action: string;
  store?: string;
  bucket?: string;
  key?: string;
  prefix?: string;
  /** A resource that is not an object (the object browser's page). */
  uri?: string;
  /** For copies: where the bytes came from (store:bucket/key or prefix). */
  source?: string;
  /** "ok", or the error's code. */
  outcome: string;
  /** Bytes the call moved or returned, where it says. */
  bytes?: number;
  /** For a listing made outside the tools (resources/list, completions): how many names it returned. */
  returned?: number;
  duration_ms: number;
  /** The JSON-RPC id the client gave the request. */
  request_id: string | number;
}

export interface AuditLog {
  write(entry: AuditEntry): void;
  /** With --audit-required, why a call may not run now (the last line could not be written); otherwise undefined. */
  refusal(): ActionableError | undefined;
  /** Opens the file anew (after a rotation moved it away). */
  reopen(): void;
  close(): void;
}

/** The most of each field a line keeps, in UTF-8 bytes (S3's own limits for buckets and keys). */
export const FIELD_BYTES = {
  caller: 256,
  action: 100,
  store: 64,
  bucket: 255,
  key: 1024,
  prefix: 1024,
  uri: 1024,
  source: 1300,
  outcome: 128,
  request_id: 128,
} as const;
/** The most one line may be: well within one atomic write to a file opened for appending. */
export const LINE_BYTES = 8 * 1024;

/** `value` cut to `max` UTF-8 bytes (on a character boundary), marked with how much was left out. */
export function clip(value: string, max: number): string {
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes <= max) return value;
  let kept = value.slice(0, max);
  while (Buffer.byteLength(kept, "utf8") > max) kept = kept.slice(0, -1);
  // A lone high surrogate left at the cut would not survive JSON as the character it was part of.
  if (/[\ud800-\udbff]$/.test(kept)) kept = kept.slice(0, -1);
  return `${kept}…(+${bytes - Buffer.byteLength(kept, "utf8")} bytes)`;
}

function bounded(entry: AuditEntry, scale: number): AuditEntry {
  const out: Record<string, unknown> = { ...entry };
  for (const [field, max] of Object.entries(FIELD_BYTES)) {
    const value = out[field];
    if (typeof value === "string") out[field] = clip(value, Math.max(16, Math.floor(max * scale)));
  }
  return out as unknown as AuditEntry;
}

const render = (entry: AuditEntry, now: Date) =>
  `${JSON.stringify({ time: now.toISOString(), ...entry }).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)}\n`;

/** One line of the log: the entry with its time first, escaped so it stays one line, every field and the line bounded. */
export function auditLine(entry: AuditEntry, now = new Date()): string {
  // Escaping can grow a field up to six times (control characters): cut the fields shorter until the line fits.
  for (const scale of [1, 0.25, 0.05]) {
    const line = render(bounded(entry, scale), now);
    if (Buffer.byteLength(line, "utf8") <= LINE_BYTES) return line;
  }
  return render(
    {
      caller: clip(entry.caller, 64),
      action: clip(entry.action, 64),
      outcome: clip(entry.outcome, 64),
      duration_ms: entry.duration_ms,
      request_id: "",
    },
    now,
  );
}

/** The refusal of a call while a required audit log cannot be written. */
function auditUnavailable(target: string): ActionableError {
  return new ActionableError({
    resource: "audit log",
    code: "AuditUnavailable",
    message: `This server must record every call in its audit log (--audit-required), and the log (${target}) cannot be written now, so no call runs.`,
    hint: "retry later; the server's operator must make room for the audit log (or fix its volume).",
    retryable: true,
  });
}

export function openAuditLog(target: string, onError: (message: string) => void, required = false): AuditLog {
  if (target === "-") {
    return {
      write: (entry) => void process.stderr.write(auditLine(entry)),
      refusal: () => undefined,
      reopen() {},
      close() {},
    };
  }
  // Owner-only: the log names people and objects.
  const open = () => openSync(target, "a", 0o600);
  let fd: number | undefined = open();
  let failing = false;
  return {
    write(entry) {
      if (fd === undefined) return;
      try {
        writeSync(fd, auditLine(entry));
        failing = false;
      } catch (err) {
        // A full disk must not stop the calls; say so once per run of failures.
        if (!failing)
          onError(
            `audit log ${target}: ${(err as Error).message}${required ? "; calls are refused until it can be written (--audit-required)" : ""}`,
          );
        failing = true;
      }
    },
    // The refused call's own line is tried as usual: once it is written, calls run again.
    refusal: () => (required && (failing || fd === undefined) ? auditUnavailable(target) : undefined),
    reopen() {
      try {
        const next = open();
        if (fd !== undefined) closeSync(fd);
        fd = next;
      } catch (err) {
        onError(
          `audit log ${target}: could not reopen (${(err as Error).message}); still writing to the file opened before`,
        );
      }
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

/**
 * The arguments that name what a call acts on, by role: a tool's addresses as its card carries them (found in its
 * schema by the shared fragments' marks, tool-kit/addresses.ts), so an argument a new tool names a key with reaches the
 * audit line without a word here. Without them (a call to no known tool), the usual names.
 */
export interface AuditAddresses {
  bucket: readonly string[];
  key: readonly string[];
  sourceBucket: readonly string[];
  sourceKey: readonly string[];
  /** Those of the above whose value is a list (a delete's or a query's keys): not on the line, which names one thing. */
  lists: readonly string[];
}

const USUAL: AuditAddresses = {
  bucket: ["bucket_name"],
  key: ["object_key"],
  sourceBucket: ["source_bucket"],
  sourceKey: ["source_key", "source_prefix"],
  lists: [],
};

/** What a call names, for its audit line: the bucket and key or prefix it acts on, and a copy's source. */
export function auditTarget(
  args: Record<string, unknown>,
  sourceStore: string | undefined,
  addresses: AuditAddresses = USUAL,
): Pick<AuditEntry, "bucket" | "key" | "prefix" | "source"> {
  const first = (names: readonly string[]) =>
    names.map((name) => args[name]).find((v): v is string => typeof v === "string");
  const named = (names: readonly string[], prefix: boolean) =>
    first(names.filter((n) => !addresses.lists.includes(n) && n.endsWith("prefix") === prefix));
  const bucket = first(addresses.bucket);
  const key = named(addresses.key, false);
  // A prefix a bulk tool acts on is marked as a key; a listing's prefix is no address at all, and goes on the line too.
  const prefix = named(addresses.key, true) ?? (typeof args.prefix === "string" ? args.prefix : undefined);
  const sourceBucket = first(addresses.sourceBucket);
  const sourcePath = first(addresses.sourceKey.filter((n) => !addresses.lists.includes(n)));
  return {
    ...(bucket !== undefined ? { bucket } : {}),
    ...(key !== undefined ? { key } : {}),
    ...(prefix !== undefined ? { prefix } : {}),
    ...(sourceBucket !== undefined
      ? { source: `${sourceStore ? `${sourceStore}:` : ""}${sourceBucket}/${sourcePath ?? ""}` }
      : {}),
  };
}

/** The line of a call refused before any tool ran (by scope, policy, or a tool not offered): named as the call named itself. */
export function refusedEntry(
  caller: string,
  action: string,
  args: unknown,
  outcome: string,
  requestId: string | number | null | undefined,
  addresses?: AuditAddresses,
): AuditEntry {
  const given = args && typeof args === "object" ? (args as Record<string, unknown>) : {};
  const sourceStore = typeof given.source_store === "string" ? given.source_store : undefined;
  return {
    caller,
    action,
    ...auditTarget(given, sourceStore, addresses),
    outcome,
    duration_ms: 0,
    request_id: requestId ?? "",
  };
}

/** Where a result says the bytes a call moved or returned, unless its tool names its own field (a tool's `bytesField`). */
const BYTES_FIELDS = ["bytes", "returned_bytes", "bytes_done"];

/** The bytes a call's result says it moved or returned: `field` where the tool names one, else the usual fields. */
export function auditBytes(structured: unknown, field?: string): number | undefined {
  if (!structured || typeof structured !== "object") return undefined;
  const out = structured as Record<string, unknown>;
  for (const name of field ? [field] : BYTES_FIELDS) {
    const value = out[name];
    if (typeof value === "number" && Number.isFinite(value)) return value;
  }
  return undefined;
}
