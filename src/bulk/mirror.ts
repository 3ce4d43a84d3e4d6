/**
 * The delete half of a mirror (delete_extraneous, move): only after the
 * transfers all went through (a failed or unfinished job deletes nothing:
 * rclone sync's rule), only with confirm: true, and where the client can ask,
 * only after the user said yes. A dry run lists what would go.
 */
import { type ConfirmAction, type Confirmation, NOT_CONFIRMED } from "../runtime/confirmation.ts";
import type { Tally } from "./tally.ts";

export interface MirrorDeletes {
  /** What the mirror would delete, by display name (and what `remove` takes). */
  names: string[];
  /** Where, for the question to the user. */
  where: string;
  dryRun: boolean;
  tally: Tally;
  confirmWithUser(action: ConfirmAction, message: string): Promise<Confirmation>;
  /** Deletes a batch; returns the names that could not be deleted, with why. */
  remove(names: string[]): Promise<{ name: string; code: string; message: string }[]>;
}

/** Why the deletes did not run (the result's note and next step) when the user said no, or undefined when they ran or there were none. */
export async function deleteExtraneous(m: MirrorDeletes): Promise<{ note: string; next: string } | undefined> {
  if (m.names.length === 0) return undefined;
  if (m.dryRun) {
    for (const name of m.names) m.tally.removed(name);
    return undefined;
  }
  const answer = await m.confirmWithUser(
    "mirror_delete",
    `Delete ${m.names.length.toLocaleString("en-US")} item(s) from ${m.where} that the source no longer has (e.g. ${m.names.slice(0, 3).join(", ")})?`,
  );
  m.tally.confirmation = answer;
  if (answer === "declined" || answer === "cancelled")
    return {
      note: `${NOT_CONFIRMED[answer].lead}: none of the ${m.names.length.toLocaleString("en-US")} extraneous item(s) was deleted`,
      next: NOT_CONFIRMED[answer].next,
    };
  const BATCH = 1000;
  for (let i = 0; i < m.names.length; i += BATCH) {
    const batch = m.names.slice(i, i + BATCH);
    const failed = await m.remove(batch);
    const bad = new Set(failed.map((f) => f.name));
    for (const f of failed) m.tally.add({ kind: "failed", ...f });
    for (const name of batch) if (!bad.has(name)) m.tally.removed(name);
  }
  return undefined;
}

/** Why a mirror's deletes are held back after the transfers, or undefined when they may run. */
export function deletesHeldBack(end: string, tally: Tally): string | undefined {
  if (end === "cancelled") return "the job was cancelled";
  if (end === "limit") return "the job stopped at max_objects; deletes run once every transfer is done";
  if (tally.counts.failed > 0) return "some transfers failed; deletes run once every transfer went through";
  if (tally.counts.archived > 0)
    return "some objects are archived and were not transferred; deletes run once every transfer went through (restore them first)";
  return undefined;
}
