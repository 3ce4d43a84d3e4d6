/** One line per check: ✓ passed, ! a warning, ✗ failed (with the fix in one sentence); or all of it as JSON. */
export type Status = "ok" | "warn" | "fail" | "skip";

export interface Check {
  name: string;
  status: Status;
  detail: string;
  /** For a warning or failure: what to do, in one sentence. */
  fix?: string;
}

const MARK: Record<Status, string> = { ok: "✓", warn: "!", fail: "✗", skip: "-" };

/**
 * What reaches a terminal: control characters (escape sequences, newlines,
 * carriage returns, C1 controls) and line separators shown as \u escapes.
 * Bucket names, Server headers and error texts come from the store: a
 * hostile one could otherwise move the cursor, recolour or forge lines
 * ("All required checks passed.").
 */
export function printable(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

export function renderCheck(c: Check): string {
  return `${MARK[c.status]} ${printable(c.name)}: ${printable(c.detail)}${c.fix ? `\n    fix: ${printable(c.fix)}` : ""}`;
}

export function renderChecks(checks: Check[]): string {
  return checks.map(renderCheck).join("\n");
}

/** Where checks go as they finish: kept for the verdict (and --json), and told to `onCheck` at once. */
export class CheckLog {
  readonly all: Check[] = [];
  constructor(private readonly onCheck: (check: Check) => void = () => {}) {}

  push(...checks: Check[]): number {
    for (const check of checks) {
      this.all.push(check);
      this.onCheck(check);
    }
    return this.all.length;
  }
}

/** Exit 0 when nothing failed (warnings allowed), 1 otherwise. */
export function exitCodeOf(checks: Check[]): number {
  return checks.some((c) => c.status === "fail") ? 1 : 0;
}
