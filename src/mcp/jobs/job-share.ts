/**
 * What the job registry (jobs.ts) is given from outside: where jobs are
 * shared with other replicas (transports/shared-jobs.ts implements it over
 * Redis/Valkey), what bounds a caller's running jobs, and how the caller's
 * policy judges a job's call again.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ActionableError } from "../../runtime/errors.ts";
import type { JobView } from "../../tool-kit/types.ts";

/** Why the caller's policy would now refuse a call of `tool` with `args` (a job's, before its result is handed over). */
export type Recheck = (tool: string, args: Record<string, unknown>) => ActionableError | undefined;

/** A job as the replicas share it. */
export interface SharedJob {
  view: JobView;
  owner: string;
  args: Record<string, unknown>;
  result?: CallToolResult;
  /** On reading: whether its replica still renews it (a running job only). */
  alive?: boolean;
}

/** Where jobs are shared with the other replicas (--state-url). Reads throw an ActionableError when it cannot answer. */
export interface JobShare {
  /** Writes a job's record (best effort: a running job is written again each second, an ended one until it lands). */
  save(job: SharedJob): void;
  load(id: string): Promise<SharedJob | undefined>;
  /** A caller's jobs, newest first. */
  listOf(owner: string, max: number): Promise<SharedJob[]>;
  /** Asks the replica running the job to cancel it. */
  cancel(id: string): Promise<void>;
  /** Resolves when the job is said to have ended, after `ms`, or on `signal` (whichever first; callers look again). */
  ended(id: string, ms: number, signal: AbortSignal): Promise<void>;
  /** Told of cancels of jobs, to cancel those this replica runs. */
  onCancel(handler: (id: string) => void): void;
  /** Forgets a job (its result may no longer be handed over). */
  drop(id: string, owner: string): void;
}
/** What bounds a caller's running jobs. */
export interface JobLimits {
  /** Running jobs one caller may have; a long call past it is refused (admit). */
  maxRunning?: number;
  /** Holds one of the caller's in-flight slots for as long as a job runs (remote mode's per-caller limits). */
  holdSlot?: (owner: string) => () => void;
}
