/**
 * Counts and samples a bulk job's outcomes, reports its progress, and shapes
 * its result: counts of every kind, bytes, seconds, and the first 50 names of
 * each kind, so a result fits the response budget whatever the object count.
 */
import { z } from "zod";
import type { Outcome } from "./engine.ts";

/** Names listed per kind; the counts cover the rest. */
export const SAMPLE = 50;

const problem = z.object({ name: z.string(), code: z.string(), message: z.string() });

/** The result every bulk transfer tool returns (upload_directory, download_prefix, copy_prefix). */
export const jobResultSchema = z.object({
  dry_run: z.boolean(),
  complete: z.boolean().describe("false: stopped at max_objects or cancelled; call again with the same arguments to go on."),
  counts: z.object({
    done: z.number().describe("Transferred (or, in a dry run, would be)."),
    unchanged: z.number(),
    unsafe: z.number(),
    conflicts: z.number(),
    failed: z.number(),
    deleted: z.number().describe("Deleted (or, in a dry run, would be)."),
    skipped_local: z.number().optional(),
  }),
  bytes_done: z.number(),
  seconds: z.number(),
  done: z.array(z.string()).describe(`The first ${SAMPLE} transferred.`),
  deleted: z.array(z.string()).describe(`The first ${SAMPLE} deleted.`),
  failed: z.array(problem),
  unsafe: z.array(problem),
  conflicts: z.array(problem),
  skipped_local: z.array(problem).optional().describe("Symlinks, FIFOs, devices and hard-linked files met in the walk: never followed or read."),
  next: z.string().optional(),
});
export type JobResult = z.output<typeof jobResultSchema>;

export interface ProgressOut {
  report(progress: number, total: number | undefined, message: string, final?: boolean): void;
}

const MiB = 1024 * 1024;
const n = (x: number) => x.toLocaleString("en-US");
const mib = (bytes: number) => (bytes / MiB).toFixed(bytes < 10 * MiB ? 1 : 0);

export class Tally {
  readonly counts = { done: 0, unchanged: 0, unsafe: 0, conflicts: 0, failed: 0, deleted: 0 };
  bytesDone = 0;
  readonly done: string[] = [];
  readonly deleted: string[] = [];
  readonly failed: z.output<typeof problem>[] = [];
  readonly unsafe: z.output<typeof problem>[] = [];
  readonly conflicts: z.output<typeof problem>[] = [];
  readonly skippedLocal: z.output<typeof problem>[] = [];
  skippedLocalCount = 0;
  #seen = 0;
  #settled = 0;
  #bytesSettled = 0;
  #bytesKnown = 0;
  #heldBack = 0;
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
  heldBack(): void {
    this.#heldBack++;
    this.#settled++;
  }
  get more(): boolean {
    return this.#heldBack > 0;
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
        const list = outcome.kind === "conflict" ? this.conflicts : this[outcome.kind];
        this.counts[outcome.kind === "conflict" ? "conflicts" : outcome.kind]++;
        if (list.length < SAMPLE) list.push({ name: outcome.name, code: outcome.code, message: outcome.message });
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

  skipLocal(p: z.output<typeof problem>): void {
    this.skippedLocalCount++;
    if (this.skippedLocal.length < SAMPLE) this.skippedLocal.push(p);
  }

  /** `1,204/5,000 objects, 310/1,290 MiB`: progress grows with objects and bytes settled (it must only grow), the total as the job learns more. */
  report(final: boolean): void {
    const message = `${this.verb}: ${n(this.#settled + this.counts.deleted)}/${n(this.#seen)} objects, ${mib(this.#bytesSettled)}/${mib(this.#bytesKnown)} MiB`;
    this.progress.report(this.#settled + this.counts.deleted + this.#bytesSettled, this.#seen + this.#bytesKnown, message, final);
  }

  result(dryRun: boolean, complete: boolean, next?: string, withLocal = false): JobResult {
    this.report(true);
    return {
      dry_run: dryRun,
      complete,
      counts: { ...this.counts, ...(withLocal ? { skipped_local: this.skippedLocalCount } : {}) },
      bytes_done: this.bytesDone,
      seconds: Math.round((performance.now() - this.#started) / 10) / 100,
      done: this.done,
      deleted: this.deleted,
      failed: this.failed,
      unsafe: this.unsafe,
      conflicts: this.conflicts,
      ...(withLocal ? { skipped_local: this.skippedLocal } : {}),
      ...(next ? { next } : {}),
    };
  }
}

/** One paragraph for the model: what was done, what was left, what to do next. */
export function summarize(r: JobResult, what: { verb: string; where: string }): string {
  const would = r.dry_run ? "would be " : "";
  const parts = [`${r.dry_run ? "Dry run: " : ""}${n(r.counts.done)} object(s) ${would}${what.verb} (${mib(r.bytes_done)} MiB) ${what.where}`];
  if (r.counts.unchanged) parts.push(`${n(r.counts.unchanged)} unchanged (skipped)`);
  if (r.counts.deleted) parts.push(`${n(r.counts.deleted)} ${would}deleted`);
  if (r.counts.unsafe) parts.push(`${n(r.counts.unsafe)} skipped as unsafe (e.g. ${r.unsafe[0]?.name}: ${r.unsafe[0]?.code})`);
  if (r.counts.conflicts) parts.push(`${n(r.counts.conflicts)} conflict(s) left as they are (e.g. ${r.conflicts[0]?.name}: ${r.conflicts[0]?.code})`);
  if (r.counts.failed) parts.push(`${n(r.counts.failed)} failed (e.g. ${r.failed[0]?.name}: ${r.failed[0]?.code})`);
  if (r.counts.skipped_local) parts.push(`${n(r.counts.skipped_local)} local entries skipped (symlinks, FIFOs, devices, hard links; e.g. ${r.skipped_local?.[0]?.name})`);
  return `${parts.join("; ")}. ${r.seconds} s.` + (r.next ? ` Next: ${r.next}` : "");
}
