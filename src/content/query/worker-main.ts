/**
 * A query worker: the executable started by the server (engine-process.ts)
 * to run one query, then end. It loads the engine as soon as it starts (a
 * spare waits warm), says "ready", runs the one query it is given over the
 * files of that query's directory, and answers with the rows or an error.
 * It watches its own resident size and ends itself past its cap, having said
 * so ("memory"); the server watches it too, and kills it on any doubt. It has
 * no credentials (the server starts it with a scrubbed environment) and ends
 * when the server's end of the pipe closes.
 */
import { writeSync } from "node:fs";
import { ActionableError } from "../../runtime/errors.ts";
import { loadEngine, runQuery, type Narrowing } from "./engine.ts";
import { line, messages, type FromWorker, type RunQuery, type ToWorker } from "./worker-protocol.ts";

/** How often the worker looks at its own resident size. */
const WATCH_EVERY_MS = 10;

/** Resolves once the whole message is written (a result can be larger than the pipe holds). */
const send = async (message: FromWorker) => void (await Bun.write(Bun.stdout, line(message)));

export async function workerMain(capBytes: number): Promise<void> {
  const watch = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss <= capBytes) return;
    // Said first, synchronously, so the server can tell a cap from a crash; then gone at once.
    try {
      writeSync(1, line({ type: "memory", rss }));
    } finally {
      process.kill(process.pid, "SIGKILL");
    }
  }, WATCH_EVERY_MS);
  watch.unref?.();
  await loadEngine();
  await send({ type: "ready" });
  const inbox = messages<ToWorker>(Bun.stdin.stream());
  const next = async <T extends ToWorker["type"]>(type: T): Promise<Extract<ToWorker, { type: T }>> => {
    const got = await inbox.next();
    // The server went away (or said something else): nothing to answer to.
    if (got.done || got.value.type !== type) process.exit(0);
    return got.value as Extract<ToWorker, { type: T }>;
  };
  const run: RunQuery = await next("run");
  const narrowing: Narrowing | undefined = run.narrowed
    ? {
        fromPlan: async (plan) => {
          await send({ type: "plan", plan });
          await next("filled");
        },
        completeAll: async () => {
          await send({ type: "complete" });
          return (await next("completed")).more;
        },
      }
    : undefined;
  try {
    const page = await runQuery({ dir: run.dir }, run.files, run.sql, run.window, run.limits, new AbortController().signal, narrowing);
    await send({ type: "result", page });
  } catch (err) {
    const e =
      err instanceof ActionableError
        ? err
        : new ActionableError({ resource: "sql", code: "QueryFailed", message: String((err as Error)?.message ?? err), hint: "fix the query and call again." });
    await send({ type: "error", error: { resource: e.resource, code: e.code, message: e.message, hint: e.hint, ...(e.retryable ? { retryable: true } : {}) } });
  }
  process.exit(0);
}
