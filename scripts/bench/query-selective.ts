/**
 * A selective query_objects over a large Parquet object: a filter on its
 * sorted column that a few row groups can answer (issue #56: it reads < 10 %
 * of the object), against downloading the object with the faster of
 * `aws s3 cp` and `rclone copyto` and running the same query with DuckDB on
 * the copy; the same rows come out. Reports time, the share of the object
 * read, and the server's peak. Appended to results-look.md.
 */
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { DuckDBInstance } from "@duckdb/node-api";
import { downloadAndDuckdb, normalized, timeQueryObjects } from "./query.ts";
import type { Network, Store } from "./transfers.ts";

const BUCKET = "bench-selective";
const KEY = "events.parquet";
/** Rows of ~75 bytes as written (an id, a time, a 64-character hash): about 1.1 GB. */
const ROWS = 15_000_000;
const RUNS = 3;
export const SELECTIVE_SQL =
  "SELECT count(*) AS n, min(id) AS lo, max(epoch(ts)) AS last, count(DISTINCT substr(hash, 1, 2)) AS prefixes FROM objects WHERE id >= 7000000 AND id < 7050000";

export interface SelectiveRow {
  network: string;
  sizeMb: number;
  oursMs: number;
  readShare: number;
  peakMb: number;
  referenceMs: number;
}

/** Writes the object (sorted by id, DuckDB's default row groups) and puts it. */
export async function seedSelective(store: Store & { endpoint: string }, work: string): Promise<number> {
  mkdirSync(work, { recursive: true });
  const file = join(work, KEY);
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  await duck.run(
    `COPY (SELECT i AS id, TIMESTAMP '2026-01-01' + INTERVAL (i) SECOND AS ts, md5(i::VARCHAR) || md5((i * 7)::VARCHAR) AS hash FROM range(${ROWS}) t(i)) TO '${file}' (FORMAT parquet)`,
  );
  const sdk = new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  await sdk.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: readFileSync(file) }));
  return statSync(file).size;
}

export async function measureSelective(
  binary: string,
  store: Store,
  net: Network,
  work: string,
  size: number,
): Promise<SelectiveRow> {
  const { ms, bytesRead, rows, peakMb } = await timeQueryObjects(
    binary,
    store,
    net,
    work,
    BUCKET,
    KEY,
    SELECTIVE_SQL,
    RUNS,
  );
  const reference = await downloadAndDuckdb(store, net, BUCKET, KEY, SELECTIVE_SQL, work, RUNS);
  if (normalized(reference.rows) !== normalized(rows))
    throw new Error(`query_objects gave ${rows}, DuckDB on the copy ${reference.rows}`);
  return {
    network: net.name,
    sizeMb: size / 1e6,
    oursMs: ms,
    readShare: bytesRead / size,
    peakMb,
    referenceMs: reference.ms,
  };
}

export function selectiveReport(rows: SelectiveRow[]): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return [
    "",
    "## query_objects: a selective query over a large Parquet object",
    "",
    `\`${SELECTIVE_SQL}\` over ${(ROWS / 1e6).toFixed(0)} million rows sorted by id (median of ${RUNS}): the filter's range is in one or two row groups, found by their statistics. The reference downloads the whole object with the faster of \`aws s3 cp\` and \`rclone copyto\`, then runs DuckDB on the copy; both give the same rows.`,
    "",
    "| network | object | query_objects | share of the object read | peak RSS | download + DuckDB | ratio |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.network} | Parquet, ${r.sizeMb.toFixed(0)} MB | ${s(r.oursMs)} | ${(r.readShare * 100).toFixed(1)} % | ${Math.round(r.peakMb)} MB | ${s(r.referenceMs)} | ${(r.referenceMs / r.oursMs).toFixed(1)}× |`,
    ),
    "",
  ].join("\n");
}
