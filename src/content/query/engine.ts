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
 * start-up).
 */
import { join, sep } from "node:path";
import { ActionableError } from "../../runtime/errors.ts";
import { objectsView, sqlText, type TableFile } from "./tables.ts";

/** Where a query runs: its private directory (the workspace, as the worker is told of it). */
export interface QueryDirectory {
  dir: string;
}

export interface EngineLimits {
  memoryBytes: number;
  threads: number;
  spillBytes: number;
  timeoutMs: number;
}

export interface RowWindow {
  /** Rows of the result to skip (a continuation's). */
  offset: number;
  maxRows: number;
  /** Bytes of JSON the rows shown may take. */
  maxBytes: number;
  /** Longest text a cell shows. */
  maxCellChars: number;
}

/** Objects placed in part (Parquet by columns): fetched by what the plan needs, or completed when a read of them failed. */
export interface Narrowing {
  /** The plan (EXPLAIN's JSON), or undefined when it could not be read: then everything. */
  fromPlan(plan: unknown): Promise<void>;
  /** Completes every file; false when there was nothing left to fetch. */
  completeAll(): Promise<boolean>;
}

/** How an object whose name tells no format was read (at most READ_AS_SHOWN of them). */
export interface ReadAs {
  key: string;
  format: "csv" | "json";
  /** CSV: the delimiter and whether the first line is a header, as the engine's sniffer found them. */
  delimiter?: string;
  header?: boolean;
}

const READ_AS_SHOWN = 20;

export interface QueryPage {
  /** Objects read by their content, not their name (see ReadAs). */
  readAs?: ReadAs[];
  columns: { name: string; type: string }[];
  rows: unknown[][];
  /** Rows the whole result has. */
  totalRows: number;
  /** Rows stopped by the bytes, not by maxRows. */
  cutToFit: boolean;
  /** Cells whose text was cut to maxCellChars. */
  cellsCut: number;
}

type Duck = typeof import("@duckdb/node-api");
type Connection = Awaited<ReturnType<Awaited<ReturnType<Duck["DuckDBInstance"]["create"]>>["connect"]>>;

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
  try {
    for (const setting of sandboxSettings(ws.dir)) await conn.run(setting);
    try {
      await conn.run(objectsView(files));
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
 * The sandbox, in this order (each closes the door on the ones before): spill, home and secret directories inside the
 * query's directory (a home elsewhere was a way around allowed_directories), file access confined to it, no external
 * access, no community extensions or persistent secrets, then the configuration locked.
 */
function sandboxSettings(dir: string): string[] {
  return [
    `SET temp_directory = ${sqlText(join(dir, "spill"))}`,
    `SET home_directory = ${sqlText(dir)}`,
    `SET secret_directory = ${sqlText(join(dir, "secrets"))}`,
    "SET allow_persistent_secrets = false",
    "SET allow_community_extensions = false",
    `SET allowed_directories = [${sqlText(dir + sep)}]`,
    "SET enable_external_access = false",
    "SET lock_configuration = true",
  ];
}

/**
 * The caller's SELECT with every text column cut to `maxChars` + 1 characters by the engine, so no cell is copied
 * whole out of it (a cell of 300 MB became a JavaScript string before it was cut); undefined when the text cannot be
 * wrapped as one SELECT (then the rows come whole, bounded by the worker's memory cap).
 */
async function cellsCutInEngine(
  duck: Duck,
  conn: Connection,
  sql: string,
  prepared: Prepared,
  maxChars: number,
): Promise<Prepared | undefined> {
  const texts = Array.from(
    { length: prepared.columnCount },
    (_, i) => prepared.columnTypeId(i) === duck.DuckDBTypeId.VARCHAR,
  );
  if (!texts.some(Boolean)) return undefined;
  const names = texts.map((_, i) => `"c${i}"`);
  const select = names.map((n, i) => (texts[i] ? `left(${n}, ${maxChars + 1})` : n)).join(", ");
  const body = sql.replace(/[\s;]+$/, "");
  try {
    const extracted = await conn.extractStatements(
      `SELECT ${select} FROM (\n${body}\n) AS __cells(${names.join(", ")})`,
    );
    if (extracted.count !== 1) return undefined;
    const wrapped = await extracted.prepare(0);
    return wrapped.statementType === duck.StatementType.SELECT && wrapped.columnCount === prepared.columnCount
      ? wrapped
      : undefined;
  } catch {
    return undefined;
  }
}

type Prepared = Awaited<ReturnType<typeof statementOf>>;

/** The one SELECT the text holds, prepared; anything else refused before it runs. */
async function statementOf(duck: Duck, conn: Connection, sql: string, toKeys: (m: string) => string) {
  const bad = async (err: unknown) =>
    new ActionableError({
      resource: "sql",
      code: "InvalidSQL",
      message: `${toKeys((err as Error).message)}\nThe table objects has the columns: ${await describe(conn)}.`,
      hint: "fix the query (DuckDB's SQL, one SELECT over the table objects) and call again.",
    });
  let extracted;
  try {
    extracted = await conn.extractStatements(sql);
  } catch (err) {
    throw await bad(err);
  }
  if (extracted.count !== 1) throw refused(`The sql holds ${extracted.count} statements.`);
  let prepared;
  try {
    prepared = await extracted.prepare(0);
  } catch (err) {
    const message = (err as Error).message;
    if (
      /^Permission Error|disabled (by|through) configuration|Missing Extension|configuration has been locked/.test(
        message,
      )
    )
      throw refused(toKeys(message.split("\n")[0]!));
    // A statement that is not a query at all (DELETE, UPDATE… on the view fail to bind): refused as such, not as bad SQL.
    const verb = NOT_A_QUERY.exec(sql)?.[1];
    if (verb) throw refused(`The sql is a ${verb.toUpperCase()} statement.`);
    throw await bad(err);
  }
  if (prepared.statementType !== duck.StatementType.SELECT)
    throw refused(`The sql is a ${duck.StatementType[prepared.statementType]} statement.`);
  return prepared;
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

/** The first word of a statement that changes something, after any comments and spaces. */
const NOT_A_QUERY =
  /^(?:\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)*(delete|update|insert|merge|upsert|create|drop|alter|truncate|copy|attach|detach|install|load|set|reset|pragma|call|export|import|vacuum|checkpoint|begin|commit|rollback|grant|revoke|comment|use)\b/i;

const refused = (why: string) =>
  new ActionableError({
    resource: "sql",
    code: "QueryRefused",
    message: `${why.replace(/\.?$/, ".")} Only one SELECT over the table objects runs: no file, URL, extension, setting, COPY or ATTACH is reachable.`,
    hint: "write one SELECT … FROM objects; the objects are chosen with bucket_name, keys or prefix and include.",
  });

/** The query's plan as EXPLAIN gives it in JSON (a SELECT already checked: EXPLAIN runs nothing), or undefined. */
async function planOf(duck: Duck, conn: Connection, sql: string): Promise<unknown> {
  try {
    // Still one statement, and an EXPLAIN, with the caller's text after the prefix: else no plan (everything is fetched).
    const extracted = await conn.extractStatements(`EXPLAIN (FORMAT json) ${sql}`);
    if (extracted.count !== 1) return undefined;
    const explain = await extracted.prepare(0);
    if (explain.statementType !== duck.StatementType.EXPLAIN) return undefined;
    return JSON.parse(String((await explain.runAndReadAll()).getRows()[0]?.[1]));
  } catch {
    return undefined;
  }
}

async function describe(conn: Connection): Promise<string> {
  try {
    const r = await conn.runAndReadAll("SELECT column_name, column_type FROM (DESCRIBE objects)");
    return r
      .getRows()
      .map(([name, type]) => `${name} ${type}`)
      .join(", ");
  } catch {
    return "(unknown: the objects could not be described)";
  }
}

/** The local paths in an engine's message, as the keys they hold. */
function namesFor(message: string, files: readonly TableFile[], ws: QueryDirectory): string {
  let out = message;
  for (const f of files) out = out.replaceAll(f.path, f.key);
  return out.replaceAll(ws.dir, "<query directory>");
}

type Result =
  Awaited<ReturnType<Awaited<ReturnType<Connection["extractStatements"]>>["prepare"]>> extends {
    stream(): Promise<infer R>;
  }
    ? R
    : never;

const WIDE_INTEGERS = new Set([5, 9, 16, 32]);
const DECIMAL = 19;

/** Rows from `offset` while they fit, then only counted: the whole result is read once. */
async function readWindow(
  duck: Duck,
  result: Result,
  typeIds: number[],
  w: RowWindow,
): Promise<Omit<QueryPage, "columns">> {
  const rows: unknown[][] = [];
  let total = 0;
  let bytes = 0;
  let cutToFit = false;
  let cellsCut = 0;
  let full = false;
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const count = chunk.rowCount;
    for (let i = Math.max(0, w.offset - total); i < count && !full; i++) {
      const row = chunk.convertRowValues(i, duck.JsonDuckDBValueConverter).map((v, c) => {
        const value = plain(v, typeIds[c]!);
        if (typeof value === "string" && value.length > w.maxCellChars)
          return (cellsCut++, `${value.slice(0, w.maxCellChars)}…`);
        return value;
      });
      const size = JSON.stringify(row).length + 1;
      if (rows.length >= w.maxRows || bytes + size > w.maxBytes) {
        full = true;
        cutToFit = rows.length < w.maxRows;
        break;
      }
      bytes += size;
      rows.push(row);
    }
    total += count;
  }
  return { rows, totalRows: total, cutToFit, cellsCut };
}

/** JSON has no 64-bit integers or decimals: a value it can hold exactly is a number, else it stays the engine's text. */
function plain(v: unknown, typeId: number): unknown {
  if (typeof v !== "string") return v;
  if (WIDE_INTEGERS.has(typeId)) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : v;
  }
  if (typeId === DECIMAL) {
    const n = Number(v);
    const digits = v.includes(".") ? v.replace(/0+$/, "").replace(/\.$/, "") : v;
    return String(n) === digits.replace(/^(-?)0+(?=\d)/, "$1") ? n : v;
  }
  return v;
}
