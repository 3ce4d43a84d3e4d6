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

export function renderChecks(checks: Check[]): string {
  return checks.map((c) => `${MARK[c.status]} ${c.name}: ${c.detail}${c.fix ? `\n    fix: ${c.fix}` : ""}`).join("\n");
}

/** Exit 0 when nothing failed (warnings allowed), 1 otherwise. */
export function exitCodeOf(checks: Check[]): number {
  return checks.some((c) => c.status === "fail") ? 1 : 0;
}
