/**
 * Jobs another replica runs, read through the share (--state-url,
 * job-share.ts): a status waited for on the job's "ended" event, a cancel
 * asked of its replica and waited for, a caller's list; a job whose replica
 * stopped renewing it is reported interrupted, with what to call again.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { JobView } from "../../tool-kit/types.ts";
import type { JobShare, SharedJob } from "./job-share.ts";

/** How long a cancel waits for the job's replica to end it (longer than a clean-up takes). */
const CANCEL_WAIT_MS = 10_000;

/** A job as a status reads it: its view, its answer once it has one, and the arguments it was called with. */
export interface FoundJob {
  job: JobView;
  result?: CallToolResult;
  args: Record<string, unknown>;
}

export class OtherReplicas {
  constructor(
    private readonly share: JobShare,
    private readonly now: () => number,
  ) {}

  /** Waits up to `waitMs` for the caller's job to end; undefined for an unknown id or another caller's. */
  async status(owner: string, id: string, waitMs: number, signal: AbortSignal): Promise<FoundJob | undefined> {
    const until = this.now() + waitMs;
    for (;;) {
      // Listening before reading: the "ended" event comes on its own connection, and may come before the answer to a
      // read that still says running.
      const left = until - this.now();
      const heard = new AbortController();
      const woken = left > 0 && !signal.aborted && this.share.ended(id, left, AbortSignal.any([signal, heard.signal]));
      try {
        const found = await this.share.load(id);
        if (!found || found.owner !== owner) return undefined;
        if (found.view.state !== "running")
          return { job: found.view, args: found.args, ...(found.result ? { result: found.result } : {}) };
        if (!found.alive) return { ...interrupted(found), args: found.args };
        if (!woken) return { job: found.view, args: found.args };
        await woken;
      } finally {
        heard.abort();
      }
    }
  }

  /** Asks the job's replica to cancel it, and waits for it to say the job ended. */
  async cancel(owner: string, id: string): Promise<JobView | undefined> {
    const found = await this.share.load(id);
    if (!found || found.owner !== owner) return undefined;
    if (found.view.state !== "running") return found.view;
    if (!found.alive) return interrupted(found).job;
    await this.share.cancel(id);
    const ended = await this.status(owner, id, CANCEL_WAIT_MS, new AbortController().signal);
    return ended?.job ?? found.view;
  }

  /** The caller's jobs on every replica, newest first (at most `max`). */
  async list(owner: string, max: number): Promise<{ view: JobView; args: Record<string, unknown> }[]> {
    return (await this.share.listOf(owner, max)).map((j) => ({
      view: j.view.state === "running" && j.alive === false ? interrupted(j).job : j.view,
      args: j.args,
    }));
  }
}

/** A job whose replica stopped renewing it (crash, kill, OOM): what the caller does next is call the tool again. */
export function interrupted(
  found: SharedJob,
  how = "stopped before the job ended (a crash, a kill or a restart)",
): { job: JobView; result: CallToolResult } {
  const job: JobView = { ...found.view, state: "interrupted" };
  const again = `call ${job.tool} again with the same arguments (${JSON.stringify(found.args).slice(0, 1_000)}): a transfer continues from what was kept, a bulk job skips what is done.`;
  const text = `JobInterrupted: the replica running job ${job.id} (${job.tool}) ${how}. Next: ${again}`;
  return { job, result: { content: [{ type: "text", text }], isError: true, structuredContent: { next: again } } };
}
