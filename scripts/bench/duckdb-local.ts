/**
 * The query bench's reference step (query.ts): DuckDB in its own process over
 * a downloaded copy, the query's `FROM objects` pointed at the file. Prints
 * the rows as JSON.
 *   bun scripts/bench/duckdb-local.ts <file> <sql>
 */
import { DuckDBInstance } from "@duckdb/node-api";

const [file, sql] = process.argv.slice(2) as [string, string];
const conn = await (await DuckDBInstance.create(":memory:")).connect();
const reader = file.endsWith(".parquet") ? "read_parquet" : "read_csv";
const result = await conn.runAndReadAll(sql.replace("FROM objects", `FROM ${reader}('${file.replaceAll("'", "''")}')`));
console.log(JSON.stringify(result.getRowsJson()));
