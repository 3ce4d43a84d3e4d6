/**
 * Queries run in worker processes, never in the server: the engine parses
 * untrusted files in C++ and builds values its memory limit does not govern,
 * so a query runs in a process that holds no credentials (its environment is
 * scrubbed to what the engine needs), whose engine can reach only the
 * query's directory, and which is killed past WORKER_MEMORY_CAP resident
 * bytes (it watches itself; on Linux the server watches it too) or when the
 * call is cancelled. Whatever happens to a worker costs its one query a
 * clear error; the server serves on.
 *
 * A worker is kept for the next query (each in a new database over its own
 * directory) while it answers cleanly and stays small: starting one is a
 * runtime and an engine to load, more than a small query's own work. One
 * that failed, was cut, grew past REUSE_BELOW or served MAX_USES queries is
 * ended; an idle one ends after IDLE_MS. At most `slots` queries run at once
 * per server, shared fairly between callers (query-slots.ts); the next is
 * answered QueryBusy at once rather than queued.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { ActionableError } from "../../runtime/errors.ts";
import { telemetry } from "../../runtime/telemetry.ts";
import type { Narrowing, QueryPage } from "./engine.ts";
import { sweepLeftovers } from "./leftovers.ts";
import { QuerySlots, type SlotOwner } from "./query-slots.ts";
import { type FromWorker, line, messages, type RunQuery, type ToWorker, WORKER_ARGUMENT } from "./worker-protocol.ts";

/** A worker's resident size past which its query ends QueryTooLarge (the engine's 96 MB and the runtime's ~60 MB fit). */
export const WORKER_MEMORY_CAP = 320 * 1024 * 1024;
/** Queries one server runs at once. */
export const QUERY_SLOTS = 2;
/** An idle worker ends after this (its memory back to the system). */
const IDLE_MS = 5 * 60_000;
/** A worker whose resident size after a query is above this is not used again. */
const REUSE_BELOW = 200 * 1024 * 1024;
/** Queries one worker runs at most. */
const MAX_USES = 100;
/** How often the server reads a running worker's resident size (Linux). */
const WATCH_EVERY_MS = 50;
/** Past the query's own time limit, the server kills a worker that has not answered. */
const GRACE_MS = 10_000;

/** The environment a worker gets: where to find its cache and temp directory, nothing else (no STORE_*, AWS_*, tokens). */
const KEPT_ENV = [
  "PATH",
  "HOME",
  "USERPROFILE",
  "LOCALAPPDATA",
  "XDG_CACHE_HOME",
  "TMPDIR",
  "TMP",
  "TEMP",
  "SystemRoot",
  "windir",
  "LANG",
  "LC_ALL",
  "TZ",
];

export function workerEnvironment(env: Record<string, string | undefined> = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT_ENV) if (env[name] !== undefined) out[name] = env[name]!;
  return out;
}

/** How this executable starts itself as a worker: compiled, itself; under bun (tests, development), the entry script. */
function workerCommand(capBytes: number): string[] {
  const runtime = basename(process.execPath).toLowerCase();
  const entry =
    runtime.startsWith("bun") || runtime.startsWith("node")
      ? [fileURLToPath(new URL("../../main.ts", import.meta.url))]
      : [];
  return [process.execPath, ...entry, WORKER_ARGUMENT, String(capBytes)];
}

class Worker {
  readonly proc: ReturnType<typeof Bun.spawn>;
  readonly inbox: AsyncGenerator<FromWorker>;
  readonly ready: Promise<void>;
  /** The largest resident size the server saw of it. */
  peakRss = 0;
  /** Queries it has run. */
  uses = 0;
  #idle: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly capBytes: number) {
    this.proc = Bun.spawn(workerCommand(capBytes), {
      env: workerEnvironment(),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    });
    this.inbox = messages<FromWorker>(this.proc.stdout as ReadableStream<Uint8Array>);
    this.ready = this.next().then((m) => {
      if (m?.type !== "ready") throw new Error("the query worker did not start");
    });
    this.ready.catch(() => {});
  }

  /** Ends it after IDLE_MS unless taken. */
  idle(onEnd: () => void): void {
    this.#idle = setTimeout(() => (this.kill(), onEnd()), IDLE_MS);
    this.#idle.unref?.();
  }

  taken(): void {
    clearTimeout(this.#idle);
  }

  async next(): Promise<FromWorker | undefined> {
    try {
      const got = await this.inbox.next();
      return got.done ? undefined : got.value;
    } catch {
      // Not a message (a line too long, or not JSON): the worker is not to be trusted any more.
      this.kill();
      return undefined;
    }
  }

  send(message: ToWorker): void {
    const stdin = this.proc.stdin as import("bun").FileSink;
    stdin.write(line(message));
    stdin.flush();
  }

  kill(): void {
    clearTimeout(this.#idle);
    this.proc.kill("SIGKILL");
  }

  /** Whether it passed its cap, as the server reads /proc (Linux only; elsewhere the worker's own watch). */
  overCap(): boolean {
    if (process.platform !== "linux") return false;
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.proc.pid}/status`, "utf8"))?.[1];
      const rss = Number(kb ?? 0) * 1024;
      this.peakRss = Math.max(this.peakRss, rss);
      return rss > this.capBytes;
    } catch {
      return false;
    }
  }
}

export class QueryEngines {
  readonly #slots: QuerySlots;
  /** Workers waiting for a query, engine loaded. */
  #idle: Worker[] = [];
  #swept = false;

  constructor(
    readonly slots = QUERY_SLOTS,
    readonly capBytes = WORKER_MEMORY_CAP,
  ) {
    this.#slots = new QuerySlots(slots);
    telemetry().watch("query.slots.used", () => this.#slots.running);
  }

  /** A slot for one query, or QueryBusy at once (never queued; shared fairly: query-slots.ts): the release gives it back. */
  take(owner?: SlotOwner): () => void {
    const release = this.#slots.take(owner);
    if (!this.#swept) {
      this.#swept = true;
      void sweepLeftovers().catch(() => {});
    }
    return release;
  }

  /**
   * Starts a worker now when none is waiting, so that its start overlaps the query's fetching: run() then takes it.
   * One left unused (the fetch failed) waits as a kept worker does, and ends when idle.
   */
  prepare(): void {
    if (this.#idle.some((w) => w.proc.exitCode === null)) return;
    this.#keep(new Worker(this.capBytes));
  }

  /** Runs `run` in a worker; `narrowing` is asked when the worker names the plan or needs files completed. */
  async run(
    run: Omit<RunQuery, "type" | "narrowed">,
    narrowing: Narrowing | undefined,
    signal: AbortSignal,
  ): Promise<QueryPage> {
    signal.throwIfAborted();
    let worker = this.#idle.pop();
    while (worker && worker.proc.exitCode !== null) worker = this.#idle.pop();
    worker ??= new Worker(this.capBytes);
    worker.taken();
    worker.uses++;
    let clean = false;
    const exited = worker.proc.exited.then(() => undefined);
    let overCap = false;
    const watch = setInterval(() => {
      if (worker.overCap()) (overCap = true), worker.kill();
    }, WATCH_EVERY_MS);
    const onAbort = () => worker.kill();
    signal.addEventListener("abort", onAbort, { once: true });
    const deadline = setTimeout(() => worker.kill(), run.limits.timeoutMs + GRACE_MS);
    try {
      await worker.ready;
      worker.send({ type: "run", ...run, narrowed: narrowing !== undefined });
      for (;;) {
        const message = await worker.next();
        if (message === undefined) break;
        if (message.type === "plan") {
          await narrowing?.fromPlan(message.plan);
          worker.send({ type: "filled" });
        } else if (message.type === "complete") {
          worker.send({ type: "completed", more: (await narrowing?.completeAll()) ?? false });
        } else if (message.type === "result") {
          clean = message.rss < REUSE_BELOW;
          return message.page;
        } else if (message.type === "error") {
          // The engine's own refusal (bad SQL, its memory limit): the worker is as good as before.
          clean = message.rss < REUSE_BELOW;
          throw new ActionableError(message.error);
        } else if (message.type === "memory") {
          overCap = true;
        }
      }
      await exited;
      signal.throwIfAborted();
      if (overCap || worker.overCap()) throw tooLarge(this.capBytes);
      throw crashed(worker.proc.signalCode == null ? undefined : String(worker.proc.signalCode), worker.proc.exitCode);
    } catch (err) {
      if (signal.aborted) throw signal.reason ?? err;
      if (err instanceof ActionableError) throw err;
      if (overCap) throw tooLarge(this.capBytes);
      throw crashed(
        worker.proc.signalCode == null ? undefined : String(worker.proc.signalCode),
        worker.proc.exitCode,
        err,
      );
    } finally {
      clearInterval(watch);
      clearTimeout(deadline);
      signal.removeEventListener("abort", onAbort);
      if (clean && !signal.aborted && worker.uses < MAX_USES && !overCap) this.#keep(worker);
      else worker.kill();
    }
  }

  #keep(worker: Worker): void {
    this.#idle.push(worker);
    worker.idle(() => (this.#idle = this.#idle.filter((w) => w !== worker)));
  }

  /** Ends the idle workers (the process stops). */
  close(): void {
    for (const worker of this.#idle) worker.kill();
    this.#idle = [];
  }
}

const tooLarge = (cap: number) =>
  new ActionableError({
    resource: "sql",
    code: "QueryTooLarge",
    message: `The query needed more than the ${Math.round(cap / 1024 / 1024)} MB of memory a query may use, and was stopped.`,
    hint: "aggregate or filter in the SQL, select fewer or shorter columns (left(col, 100)), or query fewer objects; very long strings built in the query (repeat, string_agg) count too.",
  });

const crashed = (signalCode: string | undefined, exitCode: number | null, err?: unknown) =>
  new ActionableError({
    resource: "sql",
    code: "QueryEngineCrashed",
    message: `The query engine stopped while running this query (${signalCode ? `signal ${signalCode}` : `exit code ${exitCode ?? "?"}`}${err ? `: ${String((err as Error)?.message ?? err).slice(0, 200)}` : ""}). Nothing else was affected.`,
    hint: "call again once; if it stops again, an object may be malformed for the engine: leave it out (keys, include) or inspect it with inspect_object.",
  });
