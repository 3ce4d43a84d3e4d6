/**
 * Bulk work against `aws s3 sync` and `rclone copy`, each at its default
 * settings and at its best flags (32 requests at once), on the same Ceph and
 * network: a directory of 2,000 files of 4-64 KiB plus 4 of 64 MiB up, the
 * prefix down into an empty directory, both again with nothing changed, the
 * prefix copied server-side; then storage_usage and find_objects over many
 * keys against `rclone size` and `aws s3 ls --recursive --summarize`.
 * Writes scripts/bench/results-bulk.md.
 *   BENCH_ONLY=bulk bun scripts/bench/index.ts   (this part alone)
 */

import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { procCpuMs, procMemoryMb, round, timedCommand, timedRun } from "./measure.ts";
import { startServer } from "./server-session.ts";
import { AWS_CLI, type Network, rcloneEnv, type Store, serverEnv } from "./transfers.ts";

export interface BulkRow {
  network: string;
  job: string;
  oursMs: number;
  oursPeakMb: number;
  awsMs: number;
  awsBestMs: number;
  rcloneMs: number;
  rcloneBestMs: number;
  /** CPU ms: the server's for the call alone; rclone at its best flags for its whole process. */
  oursCpuMs: number;
  rcloneBestCpuMs: number;
}

const SMALL = 2000;
const BIG = 4;
/** Files the jobs move (the small ones and the big ones). */
const FILES = SMALL + BIG;

/** 2,000 files of 4-64 KiB in 20 folders and 4 of 64 MiB. */
export function makeBulkTree(dir: string, bigMiB = 64): void {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let i = 0; i < SMALL; i++) {
    const folder = join(dir, `d${i % 20}`);
    mkdirSync(folder, { recursive: true });
    const bytes = new Uint8Array(Math.floor((4 + rand() * 60) * 1024));
    crypto.getRandomValues(bytes.subarray(0, Math.min(bytes.length, 65536)));
    writeFileSync(join(folder, `f${i}.bin`), bytes);
  }
  const big = new Uint8Array(bigMiB * 2 ** 20);
  for (let i = 0; i < BIG; i++) {
    for (let at = 0; at < big.length; at += 65536) crypto.getRandomValues(big.subarray(at, at + 65536));
    writeFileSync(join(dir, `big-${i}.bin`), big);
  }
}

function awsEnv(store: Store, best: boolean, configDir: string): Record<string, string> {
  const config = join(configDir, best ? "aws-best.cfg" : "aws-default.cfg");
  writeFileSync(config, best ? "[default]\ns3 =\n  max_concurrent_requests = 32\n" : "[default]\n");
  return {
    AWS_ACCESS_KEY_ID: store.accessKeyId,
    AWS_SECRET_ACCESS_KEY: store.secretAccessKey,
    AWS_DEFAULT_REGION: store.region,
    AWS_CONFIG_FILE: config,
    AWS_EC2_METADATA_DISABLED: "true",
  };
}

/** The four references for one job: aws default / best, rclone default / best. */
async function references(
  store: Store,
  net: Network,
  work: string,
  aws: (best: boolean) => string[],
  rclone: (best: boolean) => string[],
): Promise<Pick<BulkRow, "awsMs" | "awsBestMs" | "rcloneMs" | "rcloneBestMs" | "rcloneBestCpuMs">> {
  const best = ["--transfers", "32", "--checkers", "32"];
  return {
    awsMs: await timedCommand(
      [AWS_CLI, "--endpoint-url", net.endpoint, ...aws(false), "--only-show-errors"],
      awsEnv(store, false, work),
    ),
    awsBestMs: await timedCommand(
      [AWS_CLI, "--endpoint-url", net.endpoint, ...aws(true), "--only-show-errors"],
      awsEnv(store, true, work),
    ),
    rcloneMs: await timedCommand(["rclone", ...rclone(false)], rcloneEnv(store, net)),
    ...(await timedRun(["rclone", ...rclone(true), ...best], rcloneEnv(store, net)).then((r) => ({
      rcloneBestMs: r.ms,
      rcloneBestCpuMs: r.cpuMs,
    }))),
  };
}

/** The transfer jobs through one network; `tree` holds the files, `work` is scratch. */
export async function measureBulkTransfers(
  binary: string,
  store: Store,
  net: Network,
  bucket: string,
  tree: string,
  work: string,
): Promise<BulkRow[]> {
  const rows: BulkRow[] = [];
  const server = await startServer(binary, serverEnv(store, net), work, ["--allow-delete"]);
  const tag = net.name;
  let oursCpuMs = 0;
  const ours = async (name: string, args: Record<string, unknown>) => {
    const cpuBefore = procCpuMs(server.pid);
    const started = performance.now();
    const r = await server.call(name, { bucket_name: bucket, max_objects: 100_000, ...args });
    if (r.structuredContent?.counts?.failed)
      throw new Error(`${name} failed for ${r.structuredContent.counts.failed} objects`);
    oursCpuMs = procCpuMs(server.pid) - cpuBefore;
    return performance.now() - started;
  };
  const down = (who: string) => {
    const d = join(work, `down-${tag}-${who}`);
    rmSync(d, { recursive: true, force: true });
    return d;
  };
  try {
    const s3 = (p: string) => `s3://${bucket}/${p}`;
    const rc = (p: string) => `bench:${bucket}/${p}`;
    const row = async (job: string, oursMs: number, refs: Awaited<ReturnType<typeof references>>) => {
      rows.push({ network: tag, job, oursMs, oursCpuMs, oursPeakMb: procMemoryMb(server.pid, "VmHWM"), ...refs });
    };
    // The store's first writes into a fresh bucket are slow (Ceph sets up its pools and indexes: the same upload took
    // 6.1 s first and 4.0 s next): one untimed upload of the tree first, so no client is timed on a cold store.
    await timedCommand(
      ["rclone", "copy", tree, rc(`${tag}/warm-up`), "--transfers", "32", "--checkers", "32"],
      rcloneEnv(store, net),
    );
    // Upload: each client into a prefix of its own; then again with nothing changed.
    const upOurs = await ours("upload_directory", { local_dir: tree, prefix: `${tag}/ours` });
    await row(
      "upload directory",
      upOurs,
      await references(
        store,
        net,
        work,
        (b) => ["s3", "sync", tree, s3(`${tag}/aws${b ? "-best" : ""}`)],
        (b) => ["copy", tree, rc(`${tag}/rclone${b ? "-best" : ""}`)],
      ),
    );
    const noopOurs = await ours("upload_directory", { local_dir: tree, prefix: `${tag}/ours` });
    await row(
      "upload again, nothing changed",
      noopOurs,
      await references(
        store,
        net,
        work,
        (b) => ["s3", "sync", tree, s3(`${tag}/aws${b ? "-best" : ""}`)],
        (b) => ["copy", tree, rc(`${tag}/rclone${b ? "-best" : ""}`)],
      ),
    );
    // Download into empty directories; then again with nothing changed.
    const dirs = {
      ours: down("ours"),
      aws: down("aws"),
      awsBest: down("aws-best"),
      rclone: down("rclone"),
      rcloneBest: down("rclone-best"),
    };
    const downOurs = await ours("download_prefix", { prefix: `${tag}/ours`, local_dir: dirs.ours });
    await row(
      "download prefix",
      downOurs,
      await references(
        store,
        net,
        work,
        (b) => ["s3", "sync", s3(`${tag}/ours`), b ? dirs.awsBest : dirs.aws],
        (b) => ["copy", rc(`${tag}/ours`), b ? dirs.rcloneBest : dirs.rclone],
      ),
    );
    const downAgain = await ours("download_prefix", { prefix: `${tag}/ours`, local_dir: dirs.ours });
    await row(
      "download again, nothing changed",
      downAgain,
      await references(
        store,
        net,
        work,
        (b) => ["s3", "sync", s3(`${tag}/ours`), b ? dirs.awsBest : dirs.aws],
        (b) => ["copy", rc(`${tag}/ours`), b ? dirs.rcloneBest : dirs.rclone],
      ),
    );
    // Server-side copy of the prefix.
    const copyOurs = await ours("copy_prefix", {
      source_bucket: bucket,
      source_prefix: `${tag}/ours`,
      prefix: `${tag}/copy-ours`,
    });
    await row(
      "copy prefix (server-side)",
      copyOurs,
      await references(
        store,
        net,
        work,
        (b) => ["s3", "sync", s3(`${tag}/ours`), s3(`${tag}/copy-aws${b ? "-best" : ""}`)],
        (b) => ["copy", rc(`${tag}/ours`), rc(`${tag}/copy-rclone${b ? "-best" : ""}`)],
      ),
    );
  } finally {
    await server.close();
  }
  return rows;
}

export interface ScanRow {
  network: string;
  keys: number;
  usageMs: number;
  findMs: number;
  peakMb: number;
  rcloneSizeMs: number;
  awsLsMs: number;
}

/** `count` one-byte keys in `bucket` under scan/, 64 PUTs at a time. */
export async function seedKeys(sdk: S3Client, bucket: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < count) {
        const i = next++;
        await sdk.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: `scan/team-${i % 50}/obj-${String(i).padStart(6, "0")}.txt`,
            Body: "x",
          }),
        );
      }
    }),
  );
}

export async function measureScans(
  binary: string,
  store: Store,
  net: Network,
  bucket: string,
  keys: number,
  work: string,
): Promise<ScanRow> {
  const server = await startServer(binary, serverEnv(store, net), work);
  try {
    let started = performance.now();
    const usage = await server.call("storage_usage", { bucket_name: bucket, prefix: "scan/" });
    const usageMs = performance.now() - started;
    if (usage.structuredContent?.objects !== keys)
      throw new Error(`storage_usage counted ${usage.structuredContent?.objects}, expected ${keys}`);
    started = performance.now();
    await server.call("find_objects", {
      bucket_name: bucket,
      prefix: "scan/",
      glob: "**/obj-*99.txt",
      max_results: 1000,
    });
    const findMs = performance.now() - started;
    return {
      network: net.name,
      keys,
      usageMs,
      findMs,
      peakMb: procMemoryMb(server.pid, "VmHWM"),
      rcloneSizeMs: await timedCommand(["rclone", "size", `bench:${bucket}/scan`], rcloneEnv(store, net)),
      awsLsMs: await timedCommand(
        [AWS_CLI, "--endpoint-url", net.endpoint, "s3", "ls", "--recursive", "--summarize", `s3://${bucket}/scan/`],
        awsEnv(store, false, work),
      ),
    };
  } finally {
    await server.close();
  }
}

const s = (ms: number) => `${round(ms / 1000, 1)} s`;
const perFile = (cpuMs: number) => round(cpuMs / FILES, 2);
const ratio = (ref: number, ours: number) => `${round(ref / ours, 2)}×`;

export function bulkReport(rows: BulkRow[], scans: ScanRow[], machine: string): string {
  const lines = [
    "# Bulk work: results",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}. One run per figure (each is thousands of requests). Ratios are the faster reference at its best flags divided by ours: above 1.0× we are faster.`,
    "",
    "| network | job | ours | peak RSS | aws s3 sync (default / 32 at once) | rclone (default / --transfers 32) | vs the faster at best flags | CPU a file: ours / rclone --transfers 32 (efficiency) |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.network} | ${r.job} | ${s(r.oursMs)} | ${Math.round(r.oursPeakMb)} MB | ${s(r.awsMs)} / ${s(r.awsBestMs)} | ${s(r.rcloneMs)} / ${s(r.rcloneBestMs)} | ${ratio(Math.min(r.awsBestMs, r.rcloneBestMs), r.oursMs)} | ${perFile(r.oursCpuMs)} / ${perFile(r.rcloneBestCpuMs)} ms (${ratio(r.rcloneBestCpuMs, r.oursCpuMs)}) |`,
    ),
    "",
    "| network | keys | storage_usage | find_objects | peak RSS | rclone size | aws s3 ls --recursive --summarize | usage vs the faster |",
    "|---|---|---|---|---|---|---|---|",
    ...scans.map(
      (r) =>
        `| ${r.network} | ${r.keys.toLocaleString("en-US")} | ${s(r.usageMs)} | ${s(r.findMs)} | ${Math.round(r.peakMb)} MB | ${s(r.rcloneSizeMs)} | ${s(r.awsLsMs)} | ${ratio(Math.min(r.rcloneSizeMs, r.awsLsMs), r.usageMs)} |`,
    ),
    "",
  ];
  return lines.join("\n");
}
