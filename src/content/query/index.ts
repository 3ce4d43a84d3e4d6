/**
 * query_objects' engine: the chosen objects fetched through the storage layer
 * into a private directory (a Parquet object by the columns the query's plan
 * needs), queried there by the sandboxed engine in a worker process of its
 * own (engine-process.ts) as the table `objects`, and the directory removed,
 * whatever happened.
 */
import { ActionableError, s3Uri } from "../../runtime/errors.ts";
import type { Storage } from "../../storage/index.ts";
import { STREAM_UNUSABLE } from "./csv-head.ts";
import { type StreamedCsv, streamCsv, streamsCsv } from "./csv-stream.ts";
import { fillEarly } from "./early-fill.ts";
import type { EngineLimits, Narrowing, QueryPage, RowWindow } from "./engine.ts";
import { QueryEngines } from "./engine-process.ts";
import { columnsInPlan, fillColumns, isComplete } from "./parquet-ranges.ts";
import type { SlotOwner } from "./query-slots.ts";
import { comparisonsInPlan } from "./row-groups.ts";
import { DEFAULT_SPILL_BYTES, spillBound } from "./spill.ts";
import type { TableFile } from "./tables.ts";
import { fetchObjects, openWorkspace, type WantedObject } from "./workspace.ts";

export type { QueryPage, ReadAs, RowWindow } from "./engine.ts";
export type { WantedObject } from "./workspace.ts";

/** What one query may use, in its worker (whose whole resident size engine-process.ts caps). */
export const QUERY_LIMITS: EngineLimits = {
  memoryBytes: 96 * 1024 * 1024,
  threads: 2,
  spillBytes: DEFAULT_SPILL_BYTES,
  timeoutMs: 10 * 60 * 1000,
};
/** Bytes of objects one query fetches at most (they are written to the temp directory first). */
export const MAX_QUERY_BYTES = 2 * 1024 * 1024 * 1024;
/** Objects one query reads at most. */
export const MAX_QUERY_OBJECTS = 1000;

export interface QueryRequest {
  storage: Storage;
  bucket: string;
  objects: readonly WantedObject[];
  sql: string;
  window: RowWindow;
  signal: AbortSignal;
  /** Hears the bytes fetched so far. */
  progress?: (bytes: number) => void;
  /** The most the query may spill, as the operator set it; absent: spillBound()'s default for the temp directory. */
  spillBytes?: number;
  /** Where several callers share the server: who asks, for a fair share of the query slots (query-slots.ts). */
  owner?: Omit<SlotOwner, "sql">;
}

/** The process's query workers: made on the first query. */
let engines: QueryEngines | undefined;

export async function queryObjects(req: QueryRequest): Promise<QueryPage & { bytesRead: number }> {
  engines ??= new QueryEngines();
  // A slot now or QueryBusy: queries never wait in line, and hold nothing of the server's read budget.
  const slot = engines.take(req.owner && { ...req.owner, sql: req.sql });
  const limits = { ...QUERY_LIMITS, spillBytes: spillBound(req.spillBytes) };
  // A worker starting (its runtime and engine loading) while the objects are fetched, not after.
  engines.prepare();
  let ws;
  try {
    ws = await openWorkspace();
  } catch (err) {
    slot();
    throw err;
  }
  const stop = new AbortController();
  const onAbort = () => stop.abort(req.signal.reason);
  req.signal.addEventListener("abort", onAbort, { once: true });
  let bytesRead = 0;
  let early: Promise<void> = Promise.resolve();
  let streamed: StreamedCsv | undefined;
  try {
    const fetched = (bytes: number) => {
      bytesRead += bytes;
      req.progress?.(bytesRead);
      if (bytesRead > MAX_QUERY_BYTES) stop.abort(tooMuch(req.bucket));
    };
    const run = (files: TableFile[], narrowing?: Narrowing) =>
      engines!.run({ dir: ws.dir, files, sql: req.sql, window: req.window, limits }, narrowing, stop.signal);
    // One large CSV: scanned while it downloads (csv-stream.ts), its rows counting once the whole object is checked.
    if (streamsCsv(req.objects))
      streamed = await streamCsv(req.storage, req.bucket, req.objects[0]!, ws.data, stop.signal);
    if (streamed) {
      // A download that fails stops the engine too: it may be waiting for a FIFO that nothing will write again.
      streamed.whole.catch((err) => stop.abort(err));
      const page = !streamed.streamed
        ? undefined
        : await run([streamed.streamed]).catch((err) => {
            if (err instanceof ActionableError && err.code === STREAM_UNUSABLE) return undefined;
            throw err;
          });
      streamed.release();
      const whole = await streamed.whole;
      fetched(whole.bytes);
      return { ...(page ?? (await run([whole.table]))), bytesRead };
    }
    const { files, sparse } = await fetchObjects(req.storage, req.bucket, req.objects, ws, stop.signal, fetched);
    // What the SQL names, fetched while the worker starts and plans (early-fill.ts); the plan's fill waits for it.
    early = fillEarly(sparse, req.sql, stop.signal, fetched);
    const narrowing: Narrowing | undefined =
      sparse.length === 0
        ? undefined
        : {
            fromPlan: async (plan) => {
              await early;
              // The row groups every filter may match, by their statistics (row-groups.ts).
              const comparisons = plan === undefined ? [] : comparisonsInPlan(plan);
              for (const s of sparse)
                fetched(
                  await fillColumns(
                    s,
                    plan === undefined ? "all" : columnsInPlan(plan, [...s.columns.keys()]),
                    stop.signal,
                    comparisons,
                  ),
                );
            },
            completeAll: async () => {
              await early;
              const open = sparse.filter((s) => !isComplete(s));
              for (const s of open) fetched(await fillColumns(s, "all", stop.signal));
              return open.length > 0;
            },
          };
    return { ...(await run(files, narrowing)), bytesRead };
  } catch (err) {
    if (stop.signal.aborted && !req.signal.aborted) throw stop.signal.reason;
    throw err;
  } finally {
    req.signal.removeEventListener("abort", onAbort);
    // An early fill still running (the query failed before its plan) stops before its directory goes.
    if (!stop.signal.aborted) stop.abort(new Error("the query ended"));
    streamed?.release();
    await streamed?.whole.catch(() => {});
    await early;
    ws.remove();
    slot();
  }
}

export const tooMuch = (bucket: string) =>
  new ActionableError({
    resource: s3Uri(bucket, ""),
    code: "QueryTooLarge",
    message: `The objects to query pass ${MAX_QUERY_BYTES / 1024 / 1024 / 1024} GiB; a query fetches at most that much.`,
    hint: "choose fewer objects (keys, include, a narrower prefix), or query a Parquet form of the data.",
  });
