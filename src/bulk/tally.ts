/**
 * Counts and samples a bulk job's outcomes, reports its progress, and shapes
 * its result: counts of every kind, bytes, seconds, and the first 50 names of
 * each kind, so a result fits the response budget whatever the object count.
 */

import { z } from "zod";
import { CONFIRMATIONS, type Confirmation } from "../runtime/confirmation.ts";
import type { ProgressReporter } from "../runtime/progress.ts";
import type { Outcome } from "./outcome.ts";

/** Names listed per kind; the counts cover the rest. */
export const SAMPLE = 50;

const PROBLEM_KINDS = ["failed", "unsafe", "conflict", "skipped_local", "archived"] as const;
type ProblemKind = (typeof PROBLEM_KINDS)[number];
const problem = z.object({ kind: z.enum(PROBLEM_KINDS), name: z.string(), code: z.string(), message: z.string() });
type Problem = z.output<typeof problem>;

/** The result every bulk transfer tool returns (upload_directory, download_prefix, copy_prefix). */
export const jobResultSchema = z.object({
  dry_run: z.boolean(),
  complete: z.boolean().describe("false: call again with the same arguments to go on."),
  counts: z.object({
    done: z.number(),
    unchanged: z.number(),
    unsafe: z.number(),
    conflicts: z.number(),
    failed: z.number(),
    archived: z.number().describe("Objects the store keeps offline (ObjectArchived): restore them first."),
    deleted: z.number(),
    skipped_local: z.number(),
  }),
  bytes_done: z.number(),
  seconds: z.number(),
  done: z.array(z.string()).describe(`First ${SAMPLE}.`),
  deleted: z.array(z.string()).describe(`First ${SAMPLE}.`),
  problems: z.array(problem).describe(`First ${SAMPLE} of each kind.`),
  confirmation: z.enum(CONFIRMATIONS).describe("The user's answer, where deletes were confirmed."),
  next: z.string().optional(),
});
export type JobResult = z.output<typeof jobResultSchema>;

export type ProgressOut = Pick<ProgressReporter, "report">;

const MiB = 1024 * 1024;
/** `1,204`, as toLocaleString("en-US") writes it, at a fraction of its cost: a job of small files reports after every one. */
export function grouped(x: number): string {
  const digits = String(Math.trunc(x));
  if (digits.length <= 3 || !/^-?\d+$/.test(digits)) return digits;
  const sign = digits.startsWith("-") ? "-" : "";
  const whole = sign ? digits.slice(1) : digits;
  let out = whole.slice(0, whole.length % 3 || 3);
  for (let at = out.length; at < whole.length; at += 3) out += `,${whole.slice(at, at + 3)}`;
  return sign + out;
}
const n = grouped;
const mib = (bytes: number) => (bytes / MiB).toFixed(bytes < 10 * MiB ? 1 : 0);

export class Tally {
  readonly counts = { done: 0, unchanged: 0, unsafe: 0, conflicts: 0, failed: 0, archived: 0, deleted: 0 };
  bytesDone = 0;
  readonly done: string[] = [];
  readonly deleted: string[] = [];
  readonly problems: Problem[] = [];
  readonly #listed: Record<ProblemKind, number> = { failed: 0, unsafe: 0, conflict: 0, skipped_local: 0, archived: 0 };
  skippedLocalCount = 0;
  /** How the user answered the job's confirmation (a mirror's deletes, a move); not_asked when nobody was. */
  confirmation: Confirmation = "not_asked";
  #seen = 0;
  #settled = 0;
  #bytesSettled = 0;
  #bytesKnown = 0;
  readonly #started = performance.now();

  constructor(
    private readonly progress: ProgressOut,
    private readonly verb: string,
  ) {}

  /** An item entered the job (known so far). */
  seen(): void {
    this.#seen++;
  }
  /** Bytes the job has come to know of (for the progress total). */
  know(bytes: number): void {
    this.#bytesKnown += bytes;
  }
  /** An item the action limit kept for the next call. */
  heldBack(): void {
    this.#settled++;
  }

  add(outcome: Outcome): void {
    this.#settled++;
    switch (outcome.kind) {
      case "done":
        this.counts.done++;
        this.bytesDone += outcome.bytes;
        this.#bytesSettled += outcome.bytes;
        if (this.done.length < SAMPLE) this.done.push(outcome.name);
        break;
      case "unchanged":
        this.counts.unchanged++;
        this.#bytesSettled += outcome.bytes;
        break;
      case "unsafe":
      case "failed":
      case "conflict": {
        // An archived object is no failure of the job: it is counted apart, to be restored (errors.ts says how).
        const kind = outcome.kind === "failed" && outcome.code === "ObjectArchived" ? "archived" : outcome.kind;
        this.counts[kind === "conflict" ? "conflicts" : kind]++;
        this.#list({ kind, name: outcome.name, code: outcome.code, message: outcome.message });
        break;
      }
      case "ignored":
        break;
    }
    this.report(false);
  }

  /** A store object or local file removed by a mirror (or, in a dry run, to be). */
  removed(name: string): void {
    this.counts.deleted++;
    if (this.deleted.length < SAMPLE) this.deleted.push(name);
    this.report(false);
  }

  skipLocal(p: Omit<Problem, "kind">): void {
    this.skippedLocalCount++;
    this.#list({ kind: "skipped_local", ...p });
  }

  #list(p: Problem): void {
    if (this.#listed[p.kind]++ < SAMPLE) this.problems.push(p);
  }

  /** `1,204/5,000 objects, 310/1,290 MiB`: progress grows with objects and bytes settled (it must only grow), the total as the job learns more. */
  report(final: boolean): void {
    const message = `${this.verb}: ${n(this.#settled + this.counts.deleted)}/${n(this.#seen)} objects, ${mib(this.#bytesSettled)}/${mib(this.#bytesKnown)} MiB`;
    const doneObjects = this.#settled + this.counts.deleted;
    this.progress.report(doneObjects + this.#bytesSettled, this.#seen + this.#bytesKnown, message, final, {
      doneObjects,
      totalObjects: this.#seen,
      doneBytes: this.#bytesSettled,
      totalBytes: this.#bytesKnown,
    });
  }

  result(dryRun: boolean, complete: boolean, next?: string): JobResult {
    this.report(true);
    return {
      dry_run: dryRun,
      complete,
      counts: { ...this.counts, skipped_local: this.skippedLocalCount },
      bytes_done: this.bytesDone,
      seconds: Math.round((performance.now() - this.#started) / 10) / 100,
      done: this.done,
      deleted: this.deleted,
      problems: this.problems,
      confirmation: this.confirmation,
      ...(next ? { next } : {}),
    };
  }
}

/** One paragraph for the model: what was done, what was left, what to do next. */
export function summarize(r: JobResult, what: { verb: string; where: string }): string {
  const would = r.dry_run ? "would be " : "";
  const parts = [
    `${r.dry_run ? "Dry run: " : ""}${n(r.counts.done)} object(s) ${would}${what.verb} (${mib(r.bytes_done)} MiB) ${what.where}`,
  ];
  if (r.counts.unchanged) parts.push(`${n(r.counts.unchanged)} unchanged (skipped)`);
  if (r.counts.deleted) parts.push(`${n(r.counts.deleted)} ${would}deleted`);
  const first = (kind: ProblemKind) => {
    const p = r.problems.find((x) => x.kind === kind);
    return p ? ` (e.g. ${p.name}: ${p.code})` : "";
  };
  if (r.counts.unsafe) parts.push(`${n(r.counts.unsafe)} skipped as unsafe${first("unsafe")}`);
  if (r.counts.conflicts) parts.push(`${n(r.counts.conflicts)} conflict(s) left as they are${first("conflict")}`);
  if (r.counts.failed) parts.push(`${n(r.counts.failed)} failed${first("failed")}`);
  if (r.counts.archived)
    parts.push(
      `${n(r.counts.archived)} archived, not read${first("archived")}: ask the user whether to restore them first (billed; minutes to hours): restore_object with the same bucket and prefix restores every archived object under it (the server needs --allow-admin), then call again`,
    );
  if (r.counts.skipped_local)
    parts.push(
      `${n(r.counts.skipped_local)} local entries skipped: symlinks, FIFOs, devices, hard links${first("skipped_local")}`,
    );
  return `${parts.join("; ")}. ${r.seconds} s.${r.next ? ` Next: ${r.next}` : ""}`;
}

/** A call that would delete (a mirror, a move) without confirm: true is a dry run as a whole. */
export function isDryRun(args: { dry_run?: boolean; confirm?: boolean }, deletes: boolean): boolean {
  return args.dry_run === true || (deletes && args.confirm !== true);
}

/** The next call a result names: go on after a limit or a cancel; confirm after a dry run the model did not ask for. */
export function nextCall(
  tool: string,
  end: string,
  dry: boolean,
  askedDryRun: boolean,
  verbs: string,
): string | undefined {
  if (end !== "complete") return `call ${tool} again with the same arguments to go on (what is done is skipped).`;
  if (dry && !askedDryRun) return `call again with confirm: true to ${verbs}.`;
  return undefined;
}
