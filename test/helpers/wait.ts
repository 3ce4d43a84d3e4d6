/** Waiting on a state instead of a fixed sleep: a busy machine takes longer, a quiet one no longer than it needs. */

/** Resolves once `ready()` is true (polled every `everyMs`); throws naming `what` after `ms`. */
export async function waitFor(
  what: string,
  ready: () => boolean | Promise<boolean>,
  ms = 15_000,
  everyMs = 20,
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}
