/**
 * Why a call stopped, as far as what it kept goes: a cut (a cancelled call, the server stopping) keeps a large
 * transfer's progress to resume (kept-transfers.ts); a stop for good (cancel_job) leaves nothing behind.
 */

/** Marks a stop after which nothing is kept to resume (cancel_job: the user stopped the work for good). */
export function stopForGood<E extends Error>(reason: E): E {
  return Object.assign(reason, { discardKept: true });
}

/** Whether a call stopped for `reason` keeps what it did to resume (a cut: a cancelled call, the server stopping). */
export function keepsOnStop(reason: unknown): boolean {
  return (reason as { discardKept?: boolean } | undefined)?.discardKept !== true;
}
