/**
 * The client's roots, as the server learns them. Local operations must never
 * run on a guess: when the client declares the roots capability, every local
 * operation waits for its first roots/list answer, whatever order the
 * messages come in (a call may arrive after `initialize` but before
 * `notifications/initialized`, when the server may not ask yet), and fails
 * closed if no answer comes.
 */
import type { Server } from "@modelcontextprotocol/server";
import { rootDirs } from "../local/allowed.ts";
import type { Logger } from "../runtime/log.ts";
import { logValue } from "../runtime/redact.ts";

/** How long a local operation waits for the client's first roots answer. */
export const ROOTS_WAIT_MS = 10_000;

/** `undefined`: the client declares no roots. `{ roots }`: the real directories it shared. `{ problem }`: none could be learned. */
export type RootsState = undefined | { roots: string[] } | { problem: string };

export function trackClientRoots(server: Server, log: Logger, waitMs = ROOTS_WAIT_MS): () => Promise<RootsState> {
  let roots: string[] | undefined;
  let latest: Promise<void> | undefined;
  let answered!: () => void;
  const firstAnswer = new Promise<void>((resolve) => (answered = resolve));

  const refresh = () => {
    latest = server
      .listRoots()
      .then(({ roots: listed }) => {
        roots = rootDirs(listed.map((r) => r.uri));
        log.debug(`client roots: ${roots.map((r) => logValue(r)).join(", ") || "(none)"}`);
      })
      .catch((err: unknown) => {
        roots = [];
        log.warn(
          `the client declares roots but roots/list failed (${logValue((err as Error).message)}); local files are off`,
        );
      })
      .finally(answered);
  };
  server.oninitialized = () => {
    if (server.getClientCapabilities()?.roots) refresh();
  };
  server.setNotificationHandler("notifications/roots/list_changed", async () => refresh());

  return async () => {
    if (!server.getClientCapabilities()?.roots) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = await Promise.race([
      firstAnswer.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), waitMs))),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      return {
        problem: `The client declares roots but has not answered roots/list within ${waitMs / 1000} s, so no local path is allowed yet.`,
      };
    }
    await latest;
    return { roots: roots ?? [] };
  };
}
