/**
 * A query worker: the executable started by the server (engine-process.ts)
 * to run queries, one at a time. It loads the engine as soon as it starts and
 * uses it once, says "ready", then runs each query it is given in a new
 * database over the files of that query's directory, and answers with the
 * rows or an error, and its resident size (the server retires a worker that
 * grew).
 * It watches its own resident size and ends itself past its cap, having said
 * so ("memory"); the server watches it too, and kills it on any doubt. It has
 * no credentials (the server starts it with a scrubbed environment) and ends
 * when the server's end of the pipe closes, or mid-query when the server is
 * gone (it is given to another parent).
 */
import { writeSync } from "node:fs";
import { ActionableError } from "../../runtime/errors.ts";
import { loadEngine, type Narrowing, runQuery } from "./engine.ts";
import { type FromWorker, line, messages, type RunQuery, type ToWorker } from "./worker-protocol.ts";

/** How often the worker looks at its own resident size. */
const WATCH_EVERY_MS = 10;

/** Resolves once the whole message is written (a result can be larger than the pipe holds). */
const send = async (message: FromWorker) => void (await Bun.write(Bun.stdout, line(message)));

/**
 * The engine loaded, and its first database made and used once (a process's first costs more than later ones):
 * done while the worker waits as a spare, not while a query waits for it. The database holds nothing and
 * reads no file.
 */
async function warmUp(): Promise<void> {
  const duck = await loadEngine();
  const instance = await duck.DuckDBInstance.create(":memory:", {
    enable_external_access: "false",
    autoload_known_extensions: "false",
    autoinstall_known_extensions: "false",
  });
  const conn = await instance.connect();
  await (await conn.run("SELECT count(*) FROM range(10)")).getRows();
  conn.closeSync();
  instance.closeSync();
}

export async function workerMain(capBytes: number): Promise<void> {
  const parent = process.ppid;
  const watch = setInterval(() => {
    // The server is gone (killed mid-query: the pipe is not read while the engine runs): nobody wants the answer.
    if (process.ppid !== parent) process.kill(process.pid, "SIGKILL");
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
  await warmUp();
  await send({ type: "ready" });
  const inbox = messages<ToWorker>(Bun.stdin.stream());
  const next = async <T extends ToWorker["type"]>(type: T): Promise<Extract<ToWorker, { type: T }>> => {
    const got = await inbox.next();
    // The server went away (or said something else): nothing to answer to.
    if (got.done || got.value.type !== type) process.exit(0);
    return got.value as Extract<ToWorker, { type: T }>;
  };
  // One query at a time, each in a new database over its own directory, until the server ends the pipe.
  for (;;) {
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
      const page = await runQuery(
        { dir: run.dir },
        run.files,
        run.sql,
        run.window,
        run.limits,
        new AbortController().signal,
        narrowing,
      );
      await send({ type: "result", page, rss: process.memoryUsage.rss() });
    } catch (err) {
      const e =
        err instanceof ActionableError
          ? err
          : new ActionableError({
              resource: "sql",
              code: "QueryFailed",
              message: String((err as Error)?.message ?? err),
              hint: "fix the query and call again.",
            });
      await send({
        type: "error",
        error: {
          resource: e.resource,
          code: e.code,
          message: e.message,
          hint: e.hint,
          ...(e.retryable ? { retryable: true } : {}),
        },
        rss: process.memoryUsage.rss(),
      });
    }
  }
}
