/**
 * Queries run in worker processes, never in the server: the engine parses
 * untrusted files in C++ and builds values its memory limit does not govern,
 * so a query gets a process that holds no credentials (its environment is
 * scrubbed to what the engine needs), can reach only its directory, and is
 * killed past WORKER_MEMORY_CAP resident bytes (it watches itself; on Linux
 * the server watches it too) or when the call is cancelled. Whatever happens
 * to a worker costs its one query a clear error; the server serves on.
 *
 * Each worker runs one query and ends, so nothing of one caller's query is
 * left in a process that runs another's. A spare is started when one is
 * taken, so it is warm (engine loaded) when the next query comes. At most
 * `slots` queries run at once per server; the next is answered QueryBusy at
 * once rather than queued.
 */
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ActionableError } from "../../runtime/errors.ts";
import type { Narrowing, QueryPage } from "./engine.ts";
import { line, messages, WORKER_ARGUMENT, type FromWorker, type RunQuery, type ToWorker } from "./worker-protocol.ts";

/** A worker's resident size past which its query ends QueryTooLarge (the engine's 96 MB and the runtime's ~60 MB fit). */
export const WORKER_MEMORY_CAP = 320 * 1024 * 1024;
/** Queries one server runs at once. */
export const QUERY_SLOTS = 2;
/** A spare nobody took ends after this (its memory back to the system). */
const SPARE_IDLE_MS = 5 * 60_000;
/** How often the server reads a running worker's resident size (Linux). */
const WATCH_EVERY_MS = 50;
/** Past the query's own time limit, the server kills a worker that has not answered. */
const GRACE_MS = 10_000;

/** The environment a worker gets: where to find its cache and temp directory, nothing else (no STORE_*, AWS_*, tokens). */
const KEPT_ENV = ["PATH", "HOME", "USERPROFILE", "LOCALAPPDATA", "XDG_CACHE_HOME", "TMPDIR", "TMP", "TEMP", "SystemRoot", "windir", "LANG", "LC_ALL", "TZ"];

export function workerEnvironment(env: Record<string, string | undefined> = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT_ENV) if (env[name] !== undefined) out[name] = env[name]!;
  return out;
}

/** How this executable starts itself as a worker: compiled, itself; under bun (tests, development), the entry script. */
function workerCommand(capBytes: number): string[] {
  const runtime = basename(process.execPath).toLowerCase();
  const entry = runtime.startsWith("bun") || runtime.startsWith("node") ? [fileURLToPath(new URL("../../main.ts", import.meta.url))] : [];
  return [process.execPath, ...entry, WORKER_ARGUMENT, String(capBytes)];
}

class Worker {
  readonly proc: ReturnType<typeof Bun.spawn>;
  readonly inbox: AsyncGenerator<FromWorker>;
  readonly ready: Promise<void>;
  /** The largest resident size the server saw of it. */
  peakRss = 0;
  #idle: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly capBytes: number) {
    this.proc = Bun.spawn(workerCommand(capBytes), { env: workerEnvironment(), stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    this.inbox = messages<FromWorker>(this.proc.stdout as ReadableStream<Uint8Array>);
    this.ready = this.next().then((m) => {
      if (m?.type !== "ready") throw new Error("the query worker did not start");
    });
    this.ready.catch(() => {});
  }

  /** Ends it after SPARE_IDLE_MS unless taken. */
  idle(): void {
    this.#idle = setTimeout(() => this.kill(), SPARE_IDLE_MS);
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
  #running = 0;
  #spare: Worker | undefined;
  #swept = false;

  constructor(
    readonly slots = QUERY_SLOTS,
    readonly capBytes = WORKER_MEMORY_CAP,
  ) {}

  /** A slot for one query, or QueryBusy at once (never queued): the release gives it back. */
  take(): () => void {
    if (this.#running >= this.slots) {
      throw new ActionableError({
        resource: "query_objects",
        code: "QueryBusy",
        message: `${this.#running} queries are running on this server, the most it runs at once.`,
        hint: "retry in 5-10 seconds (or after a running query's job ends: job_status); other tools are not affected.",
        retryable: true,
      });
    }
    this.#running++;
    if (!this.#swept) {
      this.#swept = true;
      sweepLeftovers();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
    };
  }

  /** Runs `run` in a worker of its own; `narrowing` is asked when the worker names the plan or needs files completed. */
  async run(run: Omit<RunQuery, "type" | "narrowed">, narrowing: Narrowing | undefined, signal: AbortSignal): Promise<QueryPage> {
    signal.throwIfAborted();
    const worker = this.#spare ?? new Worker(this.capBytes);
    this.#spare = undefined;
    worker.taken();
    const exited = worker.proc.exited.then(() => undefined);
    let overCap = false;
    const watch = setInterval(() => {
      if (worker.overCap()) ((overCap = true), worker.kill());
    }, WATCH_EVERY_MS);
    const onAbort = () => worker.kill();
    signal.addEventListener("abort", onAbort, { once: true });
    const deadline = setTimeout(() => worker.kill(), run.limits.timeoutMs + GRACE_MS);
    try {
      await worker.ready;
      // The next query's worker starts while this one runs.
      this.#warmSpare();
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
          return message.page;
        } else if (message.type === "error") {
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
      throw crashed(worker.proc.signalCode == null ? undefined : String(worker.proc.signalCode), worker.proc.exitCode, err);
    } finally {
      clearInterval(watch);
      clearTimeout(deadline);
      signal.removeEventListener("abort", onAbort);
      worker.kill();
    }
  }

  #warmSpare(): void {
    if (this.#spare) return;
    const spare = new Worker(this.capBytes);
    spare.idle();
    this.#spare = spare;
    // A spare that dies (killed, or its start failed) is forgotten: the next query starts its own.
    void spare.proc.exited.then(() => {
      if (this.#spare === spare) this.#spare = undefined;
    });
  }

  /** Ends the spare (the process stops). */
  close(): void {
    this.#spare?.kill();
    this.#spare = undefined;
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

/** Query directories a server left behind (a SIGKILL): those of processes that no longer run. */
export function sweepLeftovers(dir = tmpdir()): number {
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const found = /^store-mcp-query-(\d+)-/.exec(name);
    if (!found) continue;
    const path = join(dir, name);
    try {
      if (alive(Number(found[1]))) continue;
      const st = statSync(path);
      if (!st.isDirectory() || st.uid !== process.getuid?.()) continue;
      rmSync(path, { recursive: true, force: true });
      removed++;
    } catch {
      // Gone already, or not ours to remove.
    }
  }
  return removed;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
