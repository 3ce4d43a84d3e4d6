/**
 * What a query is given and gives back (the worker protocol carries these),
 * and the engine's own types as the query modules share them.
 */

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

export type Duck = typeof import("@duckdb/node-api");
export type Connection = Awaited<ReturnType<Awaited<ReturnType<Duck["DuckDBInstance"]["create"]>>["connect"]>>;

/** A statement the engine has prepared. */
export type Prepared = Awaited<ReturnType<Awaited<ReturnType<Connection["extractStatements"]>>["prepare"]>>;

/** What running a prepared statement streams. */
export type Result = Prepared extends { stream(): Promise<infer R> } ? R : never;
