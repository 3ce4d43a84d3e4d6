/**
 * One running transfer per local destination. Two downloads to one new path
 * would share the path's kept temp file (kept-download.ts finds a cut
 * download's temp by its target): one wins, the other fails with a local
 * error that makes no sense for a destination. So a download claims its
 * target's real path for as long as it writes, and a second one to the same
 * path (a model calling again while the first runs as a job or a task) is
 * refused at once, naming the job to wait for, when it is the same caller's.
 * Process-wide: every server of a remote process writes to one file system.
 */
import { ActionableError } from "../runtime/errors.ts";

/** Who writes a destination: an opaque caller id, and the job the call runs as once handed back. */
export interface DestinationHolder {
  owner: string;
  job(): string | undefined;
}

const writing = new Map<string, { holder: DestinationHolder | undefined; since: number }>();

/** The refusal for a path another running transfer writes, or undefined when none does. */
export function destinationBusy(path: string, given: string, asker?: DestinationHolder): ActionableError | undefined {
  const running = writing.get(path);
  if (!running) return undefined;
  // Another caller's job is theirs to name: this one hears only that the path is in use.
  const job = running.holder && asker && running.holder.owner === asker.owner ? running.holder.job() : undefined;
  const secs = Math.round((Date.now() - running.since) / 1000);
  return new ActionableError({
    resource: given,
    code: "DestinationBusy",
    message: `Another running download is writing this file (${job ? `job ${job}, ` : ""}started ${secs} s ago); two transfers never write one destination.`,
    hint: job
      ? `wait for it with job_status (job_id "${job}"), or stop it with cancel_job, or choose another local path.`
      : "wait for that download to end, or choose another local path.",
    retryable: true,
  });
}

/** Claims `path` for one transfer: the release gives it back (once); a path already claimed is refused. */
export function claimDestination(path: string, given: string, holder?: DestinationHolder): () => void {
  const busy = destinationBusy(path, given, holder);
  if (busy) throw busy;
  const mine = { holder, since: Date.now() };
  writing.set(path, mine);
  return () => {
    if (writing.get(path) === mine) writing.delete(path);
  };
}
