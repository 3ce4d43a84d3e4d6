/**
 * The caller's SQL as the engine takes it: one SELECT, prepared, or refused
 * before anything runs; the same SELECT with its text cells cut inside the
 * engine; its plan; the table's columns for an error that names them.
 */
import { ActionableError } from "../../runtime/errors.ts";
import type { Connection, Duck, Prepared } from "./engine-types.ts";

/**
 * The caller's SELECT with every text column cut to `maxChars` + 1 characters by the engine, so no cell is copied
 * whole out of it (a cell of 300 MB became a JavaScript string before it was cut); undefined when the text cannot be
 * wrapped as one SELECT (then the rows come whole, bounded by the worker's memory cap).
 */
export async function cellsCutInEngine(
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

/** The one SELECT the text holds, prepared; anything else refused before it runs. */
export async function statementOf(duck: Duck, conn: Connection, sql: string, toKeys: (m: string) => string) {
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
export async function planOf(duck: Duck, conn: Connection, sql: string): Promise<unknown> {
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
