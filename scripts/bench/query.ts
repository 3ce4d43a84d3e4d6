/**
 * query_objects (#47): a group-by over a 200 MB CSV and over its Parquet form
 * (written by DuckDB), against what a user does without it — download the
 * object with the faster of `aws s3 cp` and `rclone copyto`, then DuckDB (the
 * same engine, in its own process) reading the downloaded copy — on loopback
 * and through the WAN model; the same rows come out. Reports time, bytes read
 * from the store (a Parquet object: its footer and the columns the query
 * needs) and the server's peak RSS. Appended to results-look.md.
 */

import { mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { DuckDBInstance } from "@duckdb/node-api";
import { median, procMemoryMb, timedRun, treeCpuMs } from "./measure.ts";
import { startServer } from "./server-session.ts";
import { AWS_CLI, type Network, rcloneEnv, type Store, serverEnv } from "./transfers.ts";

/** The bucket the query bench seeds (its CSV, its Parquet form, a tiny CSV). */
export const QUERY_BUCKET = "bench-query";
const BUCKET = QUERY_BUCKET;
const CSV_MB = 200;
const RUNS = 3;
const SQL =
  "SELECT status, count(*) AS n, round(avg(ms), 3) AS avg_ms, max(bytes) AS max_bytes FROM objects GROUP BY status ORDER BY status";

export interface QueryRow {
  network: string;
  format: string;
  sizeMb: number;
  oursMs: number;
  /** The same query called again on the same server (its worker started, its connections open): what a running server pays. */
  laterMs: number;
  bytesRead: number;
  peakMb: number;
  referenceMs: number;
  duckdbLocalMs: number;
  /** CPU, ms: the server's and its query worker's for a server's first call and for a later one (medians). */
  oursCpuMs: number;
  laterCpuMs: number;
  /** rclone copyto's whole process plus DuckDB's on the copy (medians). */
  referenceCpuMs: number;
}

/** Writes the CSV (~200 MB of access-log rows) and DuckDB's Parquet form of it, and puts both. */
export async function seedQuery(
  store: Store & { endpoint: string },
  work: string,
): Promise<{ csv: number; parquet: number }> {
  mkdirSync(work, { recursive: true });
  const csv = join(work, "access.csv");
  const parquet = join(work, "access.parquet");
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  // ~53 bytes a row as written: 3.8 million rows.
  const rows = Math.round((CSV_MB * 1e6) / 53);
  await duck.run(
    `COPY (SELECT '2026-11-' || lpad(((i % 28) + 1)::VARCHAR, 2, '0') || 'T' || lpad((i % 24)::VARCHAR, 2, '0') || ':00:00Z' AS ts, (ARRAY[200, 200, 200, 201, 304, 404, 500, 503])[(i * 7919 % 8) + 1] AS status, ` +
      `(i * 37 % 2000) AS ms, (i * 104729 % 1000000) AS bytes, '/api/items/' || (i % 100000)::VARCHAR AS path FROM range(${rows}) t(i)) TO '${csv}' (HEADER)`,
  );
  await duck.run(`COPY (SELECT * FROM read_csv('${csv}')) TO '${parquet}' (FORMAT parquet)`);
  const sdk = new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  await sdk.send(new CreateBucketCommand({ Bucket: BUCKET }));
  for (const [key, file] of [
    ["access.csv", csv],
    ["access.parquet", parquet],
  ] as const)
    await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: readFileSync(file) }));
  await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: "tiny.csv", Body: "a,b\n1,x\n2,y\n" }));
  return { csv: statSync(csv).size, parquet: statSync(parquet).size };
}

export async function measureQuery(
  binary: string,
  store: Store,
  net: Network,
  work: string,
  sizes: { csv: number; parquet: number },
): Promise<QueryRow[]> {
  const out: QueryRow[] = [];
  for (const [format, key] of [
    ["CSV", "access.csv"],
    ["Parquet", "access.parquet"],
  ] as const) {
    const { ms, laterMs, bytesRead, rows, peakMb, cpuMs, laterCpuMs } = await timeQueryObjects(
      binary,
      store,
      net,
      work,
      BUCKET,
      key,
      SQL,
      RUNS,
    );
    const reference = await downloadAndDuckdb(store, net, BUCKET, key, SQL, work, RUNS);
    if (normalized(reference.rows) !== normalized(rows))
      throw new Error(`query_objects gave ${rows}, DuckDB on the copy ${reference.rows}`);
    out.push({
      network: net.name,
      format,
      sizeMb: (format === "CSV" ? sizes.csv : sizes.parquet) / 1e6,
      oursMs: ms,
      laterMs,
      bytesRead,
      peakMb,
      referenceMs: reference.ms,
      duckdbLocalMs: reference.duckdbMs,
      oursCpuMs: cpuMs,
      laterCpuMs,
      referenceCpuMs: reference.cpuMs,
    });
  }
  return out;
}

/**
 * query_objects over one object, each of `runs` times on a fresh server, then once more on it: the medians of the
 * first and the later call's time and CPU (the server's and its worker's: treeCpuMs), the bytes read, the rows (JSON)
 * and the peak.
 */
export async function timeQueryObjects(
  binary: string,
  store: Store,
  net: Network,
  work: string,
  bucket: string,
  key: string,
  sql: string,
  runs: number,
): Promise<{
  ms: number;
  laterMs: number;
  bytesRead: number;
  rows: string;
  peakMb: number;
  cpuMs: number;
  laterCpuMs: number;
}> {
  const times: number[] = [];
  const later: number[] = [];
  const cpu: number[] = [];
  const laterCpu: number[] = [];
  let peakMb = 0;
  let bytesRead = 0;
  let rows = "";
  for (let r = 0; r < runs; r++) {
    const server = await startServer(binary, serverEnv(store, net), work);
    try {
      const cpuBefore = treeCpuMs(server.pid);
      const started = performance.now();
      const got = await server.call("query_objects", { bucket_name: bucket, keys: [key], sql });
      times.push(performance.now() - started);
      const cpuBetween = treeCpuMs(server.pid);
      cpu.push(cpuBetween - cpuBefore);
      bytesRead = got.structuredContent!.bytes_read;
      rows = JSON.stringify(got.structuredContent!.rows);
      const again = performance.now();
      const second = await server.call("query_objects", { bucket_name: bucket, keys: [key], sql });
      later.push(performance.now() - again);
      laterCpu.push(treeCpuMs(server.pid) - cpuBetween);
      if (JSON.stringify(second.structuredContent!.rows) !== rows) throw new Error("a later query gave other rows");
      peakMb = Math.max(peakMb, procMemoryMb(server.pid, "VmHWM"));
    } finally {
      await server.close();
    }
  }
  return {
    ms: median(times),
    laterMs: median(later),
    bytesRead,
    rows,
    peakMb,
    cpuMs: median(cpu),
    laterCpuMs: median(laterCpu),
  };
}

/**
 * What a user does without query_objects, `runs` times: download the object with `aws s3 cp` and with
 * `rclone copyto`, then run `sql` with DuckDB (its own process) on the copy. The faster download's median plus the
 * query's, the query's alone, the CPU of rclone's download plus DuckDB's (whole processes, medians), and the rows it
 * gave (JSON).
 */
export async function downloadAndDuckdb(
  store: Store,
  net: Network,
  bucket: string,
  key: string,
  sql: string,
  work: string,
  runs: number,
): Promise<{ ms: number; duckdbMs: number; cpuMs: number; rows: string }> {
  const local = join(work, `copy-${key}`);
  const script = join(import.meta.dir, "duckdb-local.ts");
  const env = {
    AWS_ACCESS_KEY_ID: store.accessKeyId,
    AWS_SECRET_ACCESS_KEY: store.secretAccessKey,
    AWS_DEFAULT_REGION: store.region,
    AWS_EC2_METADATA_DISABLED: "true",
  };
  const download = (how: "aws" | "rclone") => {
    rmSync(local, { force: true });
    return how === "aws"
      ? timedRun(
          [AWS_CLI, "--endpoint-url", net.endpoint, "s3", "cp", `s3://${bucket}/${key}`, local, "--only-show-errors"],
          env,
        )
      : timedRun(["rclone", "copyto", `bench:${bucket}/${key}`, local], rcloneEnv(store, net));
  };
  const downloads = { aws: [] as number[], rclone: [] as number[] };
  const rcloneCpu: number[] = [];
  const queries: number[] = [];
  const queryCpu: number[] = [];
  let rows = "";
  for (let r = 0; r < runs; r++) {
    for (const how of ["aws", "rclone"] as const) {
      const run = await download(how);
      downloads[how].push(run.ms);
      if (how === "rclone") rcloneCpu.push(run.cpuMs);
    }
    const started = performance.now();
    const q = Bun.spawnSync([process.execPath, script, local, sql], {
      cwd: import.meta.dir,
      stdout: "pipe",
      stderr: "pipe",
    });
    queries.push(performance.now() - started);
    const used = q.resourceUsage;
    queryCpu.push(used ? (Number(used.cpuTime.user) + Number(used.cpuTime.system)) / 1000 : Number.NaN);
    if (q.exitCode !== 0) throw new Error(`DuckDB on the copy failed: ${q.stderr}`);
    rows = q.stdout.toString().trim();
  }
  rmSync(local, { force: true });
  return {
    ms: Math.min(median(downloads.aws), median(downloads.rclone)) + median(queries),
    duckdbMs: median(queries),
    cpuMs: median(rcloneCpu) + median(queryCpu),
    rows,
  };
}

/** The rows as plain numbers (the reference prints 64-bit integers as text). */
export const normalized = (json: string) =>
  JSON.stringify(
    (JSON.parse(json) as unknown[][]).map((r) =>
      r.map((v) => (typeof v === "string" && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v)),
    ),
  );

export function queryReport(rows: QueryRow[]): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return [
    "",
    "## query_objects: a group-by over a 200 MB CSV and its Parquet form",
    "",
    `\`${SQL}\` (median of ${RUNS}). The reference downloads the object with the faster of \`aws s3 cp\` and \`rclone copyto\`, then runs the same query with DuckDB (the same engine, its own process, default settings) on the copy; both give the same rows. CPU: ours is the server's and its query worker's for the call (a first query includes starting the worker), the reference's \`rclone copyto\`'s whole process plus DuckDB's; efficiency is the reference's over ours.`,
    "",
    "| network | object | query_objects, a server's first | a later query | bytes read | peak RSS | download + DuckDB | ratio: first / later | DuckDB on the copy alone | CPU: first / later (server + worker) | CPU: rclone copyto + DuckDB | CPU efficiency: first / later |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.network} | ${r.format}, ${r.sizeMb.toFixed(0)} MB | ${s(r.oursMs)} | ${s(r.laterMs)} | ${(r.bytesRead / 1e6).toFixed(0)} MB | ${Math.round(r.peakMb)} MB | ${s(r.referenceMs)} | ${(r.referenceMs / r.oursMs).toFixed(2)}× / ${(r.referenceMs / r.laterMs).toFixed(2)}× | ${s(r.duckdbLocalMs)} | ${s(r.oursCpuMs)} / ${s(r.laterCpuMs)} | ${s(r.referenceCpuMs)} | ${(r.referenceCpuMs / r.oursCpuMs).toFixed(2)}× / ${(r.referenceCpuMs / r.laterCpuMs).toFixed(2)}× |`,
    ),
    "",
    "query_objects fetches a CSV into its private directory, read whole from a near store, and from a far one (the WAN model) scanned by the engine as it arrives; a Parquet object by its footer and then only the chunks of the columns the plan scans or filters on (here 3 of 5: not `ts` or `path`), see docs/tools.md. Its engine runs with 2 threads and 96 MB of memory.",
    "",
  ].join("\n");
}
