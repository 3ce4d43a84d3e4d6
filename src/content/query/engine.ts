/**
 * One query in a sandboxed DuckDB: an in-memory database whose file access
 * is confined to the query's private directory (allowed_directories, then
 * enable_external_access = false, then lock_configuration = true: in that
 * order, since each closes the door on the one before), with no extension
 * installed or loaded, a memory limit, its spill files in that directory,
 * and one statement that must be a SELECT. Parquet files placed in part
 * (parquet-ranges.ts) are filled with what the query's plan needs before it
 * runs, and completed for a second run should the first read a hole. The
 * engine is loaded on the first query (a dynamic import: nothing of it at
 * start-up). The SQL's checks and wrappings are engine-sql.ts's; reading the
 * result into the caller's window is result-window.ts's.
 */
import { join, sep } from "node:path";
import { ActionableError } from "../../runtime/errors.ts";
import { headOptions, STREAM_UNUSABLE, streamUnusable } from "./csv-head.ts";
import { cellsCutInEngine, planOf, statementOf } from "./engine-sql.ts";
import type {
  Connection,
  Duck,
  EngineLimits,
  Narrowing,
  QueryDirectory,
  QueryPage,
  ReadAs,
  RowWindow,
} from "./engine-types.ts";
import { readWindow } from "./result-window.ts";
import { objectsView, sqlText, type TableFile } from "./tables.ts";

export type { EngineLimits, Narrowing, QueryDirectory, QueryPage, ReadAs, RowWindow } from "./engine-types.ts";

const READ_AS_SHOWN = 20;

export async function loadEngine(): Promise<Duck> {
  try {
    return await import("@duckdb/node-api");
  } catch (err) {
    throw new ActionableError({
      resource: "query engine",
      code: "QueryEngineUnavailable",
      message: `The query engine (DuckDB) could not be loaded here: ${(err as Error).message}`,
      hint: "use search_objects or inspect_object instead; docs/tools.md says which platforms carry the engine and what it needs (libstdc++ on Linux).",
    });
  }
}

/** Runs `sql` over `files` as the table `objects` and returns the window of its result. */
export async function runQuery(
  ws: QueryDirectory,
  files: readonly TableFile[],
  sql: string,
  window: RowWindow,
  limits: EngineLimits,
  signal: AbortSignal,
  narrowing?: Narrowing,
): Promise<QueryPage> {
  const duck = await loadEngine();
  const instance = await duck.DuckDBInstance.create(":memory:", {
    threads: String(limits.threads),
    memory_limit: `${Math.floor(limits.memoryBytes / 1024 / 1024)}MB`,
    max_temp_directory_size: `${Math.floor(limits.spillBytes / 1024 / 1024)}MB`,
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
    // Its cache of file blocks would keep the holes of a Parquet file read before they were filled (parquet-ranges.ts);
    // the files are local, the system's page cache holds them anyway.
    enable_external_file_cache: "false",
  });
  const conn = await instance.connect();
  const toKeys = (message: string) => namesFor(message, files, ws);
  // Cancelled, or past its time: the engine stops at its next check.
  let stoppedBy: "cancel" | "time" | undefined;
  const onAbort = () => ((stoppedBy ??= "cancel"), conn.interrupt());
  signal.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => ((stoppedBy ??= "time"), conn.interrupt()), limits.timeoutMs);
  const streamed = files.find((f): f is TableFile & { head: string } => f.head !== undefined);
  try {
    for (const setting of sandboxSettings(ws.dir, limits.spillBytes)) await conn.run(setting);
    const streamOptions = streamed && (await headOptions(conn, streamed));
    try {
      await conn.run(objectsView(files, streamOptions));
    } catch (err) {
      // Its "LINE 1:" context is the view's text, not the caller's: left out.
      const message = toKeys((err as Error).message.split("\nLINE ")[0]!.trim());
      throw new ActionableError({
        resource: "objects",
        code: "UnreadableObject",
        message: `The objects could not be read as one table: ${message}`,
        hint: "inspect_object shows what the named object holds; leave it out with keys, include or a narrower prefix.",
      });
    }
    const readAs = await readByContent(conn, files);
    const prepared = await statementOf(duck, conn, sql, toKeys);
    // The caller's names and types; the rows come from the same query with its text cells cut inside the engine.
    const columns = Array.from({ length: prepared.columnCount }, (_, i) => ({
      name: prepared.columnName(i),
      type: prepared.columnType(i).toString(),
    }));
    const cut = await cellsCutInEngine(duck, conn, sql, prepared, window.maxCellChars);
    if (narrowing) await narrowing.fromPlan(await planOf(duck, conn, sql));
    const run = async () => {
      const result = await (cut ?? prepared).stream();
      const typeIds = result.columnTypes().map((t) => t.typeId);
      return { ...(readAs.length ? { readAs } : {}), columns, ...(await readWindow(duck, result, typeIds, window)) };
    };
    try {
      return await run();
    } catch (err) {
      // A part of a file the plan did not name was read: complete the files and run it again (once).
      if (stoppedBy || !narrowing || !(await narrowing.completeAll())) throw err;
      return await run();
    }
  } catch (err) {
    if (stoppedBy === "cancel") throw signal.reason ?? err;
    // Whatever went wrong over a streamed CSV is decided over the whole file: the server runs the query again there.
    if (streamed && !stoppedBy)
      throw err instanceof ActionableError && err.code === STREAM_UNUSABLE
        ? err
        : streamUnusable(String((err as Error).message).split("\n")[0]!);
    if (stoppedBy === "time")
      throw new ActionableError({
        resource: "sql",
        code: "QueryTimeout",
        message: `The query ran past its ${Math.round(limits.timeoutMs / 1000)} s limit and was stopped.`,
        hint: "narrow it: fewer objects (keys, include), a WHERE that filters early, or an aggregate instead of every row.",
      });
    if (err instanceof ActionableError) throw err;
    // The engine's own limit, met before the worker's cap: the same answer, with the engine's words.
    const memory = (err as Error).message.includes("Out of Memory");
    throw new ActionableError({
      resource: "sql",
      code: memory ? "QueryTooLarge" : "QueryFailed",
      message: toKeys((err as Error).message),
      hint: memory
        ? `the query needs more than its ${Math.floor(limits.memoryBytes / 1024 / 1024)} MB of memory: aggregate, filter or select fewer columns.`
        : "fix the query and call again.",
    });
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    conn.closeSync();
    instance.closeSync();
  }
}

/**
 * The sandbox, in this order (each closes the door on the ones before): spill and its bound, home and secret directories inside the
 * query's directory (a home elsewhere was a way around allowed_directories), file access confined to it, no external
 * access, no community extensions or persistent secrets, then the configuration locked.
 */
function sandboxSettings(dir: string, spillBytes: number): string[] {
  return [
    `SET temp_directory = ${sqlText(join(dir, "spill"))}`,
    // Again after the directory: the engine's spill bound takes only a value set once its temp directory is (a bound
    // given only when the instance is made reads back, yet the spill passes it: 278 MB spilled under 16 MB, DuckDB 1.5).
    `SET max_temp_directory_size = '${Math.floor(spillBytes / 1024 / 1024)}MB'`,
    `SET home_directory = ${sqlText(dir)}`,
    `SET secret_directory = ${sqlText(join(dir, "secrets"))}`,
    "SET allow_persistent_secrets = false",
    "SET allow_community_extensions = false",
    `SET allowed_directories = [${sqlText(dir + sep)}]`,
    "SET enable_external_access = false",
    "SET lock_configuration = true",
  ];
}

/** How the objects without a known extension were read: a CSV's delimiter and header as the engine's sniffer finds them. */
async function readByContent(conn: Connection, files: readonly TableFile[]): Promise<ReadAs[]> {
  const told = files.filter((f) => f.byContent && f.format !== "parquet").slice(0, READ_AS_SHOWN);
  const out: ReadAs[] = [];
  for (const file of told) {
    if (file.format === "json") {
      out.push({ key: file.key, format: "json" });
      continue;
    }
    const sniffed = await conn
      .runAndReadAll(`SELECT Delimiter, HasHeader FROM sniff_csv(${sqlText(file.path)})`)
      .then((r) => r.getRowObjects()[0] as { Delimiter?: string; HasHeader?: boolean } | undefined)
      .catch(() => undefined);
    out.push({ key: file.key, format: "csv", delimiter: sniffed?.Delimiter, header: sniffed?.HasHeader });
  }
  return out;
}

/** The local paths in an engine's message, as the keys they hold. */
function namesFor(message: string, files: readonly TableFile[], ws: QueryDirectory): string {
  let out = message;
  for (const f of files) out = out.replaceAll(f.path, f.key);
  return out.replaceAll(ws.dir, "<query directory>");
}
