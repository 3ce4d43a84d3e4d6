/**
 * Upload and download through the server vs `rclone copyto` and `aws s3 cp`,
 * all three through the same network (loopback, or the WAN model in front of
 * the same store), with the server's peak RSS per transfer.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { median, procCpuMs, procMemoryMb, timedRun } from "./measure.ts";
import { startServer } from "./server-session.ts";

export interface TransferFigures {
  network: string;
  sizeMiB: number;
  uploadMs: number;
  rcloneUploadMs: number;
  awsUploadMs: number;
  uploadPeakRssMb: number;
  downloadMs: number;
  rcloneDownloadMs: number;
  awsDownloadMs: number;
  downloadPeakRssMb: number;
  /**
   * CPU ms per transfer (medians): the server's for the call alone (/proc, start-up excluded), each reference's for
   * its whole process. CPU holds on a busy machine where wall time does not, and where a core is the limit it is the speed.
   */
  uploadCpuMs: number;
  rcloneUploadCpuMs: number;
  awsUploadCpuMs: number;
  downloadCpuMs: number;
  rcloneDownloadCpuMs: number;
  awsDownloadCpuMs: number;
}

/** The store as every client under test reaches it: its endpoint (the WAN proxy's, or the store's own). */
export interface Network {
  name: string;
  endpoint: string;
}

export interface Store {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

export interface TransferSetup {
  binary: string;
  store: Store;
  bucket: string;
  dir: string;
  runs: number;
}

/** Debian's awscli installs /usr/bin/aws; another `aws` earlier on PATH (a pyenv AWS CLI 1) is not the reference. */
export const AWS_CLI = existsSync("/usr/bin/aws") ? "/usr/bin/aws" : "aws";

export function serverEnv(store: Store, net: Network): Record<string, string> {
  return {
    STORE_ENDPOINT_URL: net.endpoint,
    // What doctor tells an operator of a Ceph store to give (rclone is told so too): its differences as Ceph's.
    STORE_PROVIDER: "ceph",
    STORE_ACCESS_KEY_ID: store.accessKeyId,
    STORE_SECRET_ACCESS_KEY: store.secretAccessKey,
    STORE_REGION: store.region,
    STORE_LOG_LEVEL: "error",
  };
}

export function rcloneEnv(store: Store, net: Network): Record<string, string> {
  return {
    RCLONE_CONFIG_BENCH_TYPE: "s3",
    RCLONE_CONFIG_BENCH_PROVIDER: "Ceph",
    RCLONE_CONFIG_BENCH_ENDPOINT: net.endpoint,
    RCLONE_CONFIG_BENCH_ACCESS_KEY_ID: store.accessKeyId,
    RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY: store.secretAccessKey,
    RCLONE_CONFIG_BENCH_REGION: store.region,
  };
}

/** The AWS CLI with only these settings: no config file, no instance metadata lookups, its defaults otherwise. */
function awsEnv(store: Store): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: store.accessKeyId,
    AWS_SECRET_ACCESS_KEY: store.secretAccessKey,
    AWS_DEFAULT_REGION: store.region,
    AWS_CONFIG_FILE: "/dev/null",
    AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
    AWS_EC2_METADATA_DISABLED: "true",
  };
}

const aws = (setup: TransferSetup, net: Network, from: string, to: string) =>
  timedRun([AWS_CLI, "--endpoint-url", net.endpoint, "s3", "cp", "--only-show-errors", from, to], awsEnv(setup.store));

type Run = { ms: number; cpuMs: number; peakMb?: number };

/** One transfer in a fresh server process, so VmHWM is this transfer's peak alone. */
async function serverTransfer(
  setup: TransferSetup,
  net: Network,
  name: string,
  args: Record<string, unknown>,
): Promise<Run> {
  const server = await startServer(setup.binary, serverEnv(setup.store, net), setup.dir);
  try {
    const cpuBefore = procCpuMs(server.pid);
    const started = performance.now();
    await server.call(name, args);
    const ms = performance.now() - started;
    return { ms, cpuMs: procCpuMs(server.pid) - cpuBefore, peakMb: procMemoryMb(server.pid, "VmHWM") };
  } finally {
    await server.close();
  }
}

export async function measureTransfer(
  setup: TransferSetup,
  net: Network,
  file: string,
  sizeMiB: number,
): Promise<TransferFigures> {
  const key = (who: string) => `${who}-${net.name}-${sizeMiB}.bin`;
  const rclone = rcloneEnv(setup.store, net);
  const up: Run[] = [];
  const down: Run[] = [];
  const rcloneUp: Run[] = [];
  const rcloneDown: Run[] = [];
  const awsUp: Run[] = [];
  const awsDown: Run[] = [];
  // Interleaved, so drift on a shared machine hits every client alike; and each round starts with
  // the next client, so none always takes the same slot (the first download comes right after the
  // store took three uploads; on this VM a transfer's kernel time varies with what ran before it).
  const uploads = [
    async () =>
      void up.push(
        await serverTransfer(setup, net, "upload_file", {
          local_file_path: file,
          bucket_name: setup.bucket,
          object_key: key("ours"),
        }),
      ),
    async () =>
      void rcloneUp.push(
        await timedRun(
          ["rclone", "copyto", "--ignore-times", join(setup.dir, file), `bench:${setup.bucket}/${key("rclone")}`],
          rclone,
        ),
      ),
    async () => void awsUp.push(await aws(setup, net, join(setup.dir, file), `s3://${setup.bucket}/${key("aws")}`)),
  ];
  const downloads = [
    async () =>
      void down.push(
        await serverTransfer(setup, net, "get_object", {
          bucket_name: setup.bucket,
          object_key: key("ours"),
          mode: "download",
          local_path: `down/${key("ours")}`,
          overwrite: true,
        }),
      ),
    async () =>
      void rcloneDown.push(
        await timedRun(
          [
            "rclone",
            "copyto",
            "--ignore-times",
            `bench:${setup.bucket}/${key("rclone")}`,
            join(setup.dir, "down", key("rclone")),
          ],
          rclone,
        ),
      ),
    async () =>
      void awsDown.push(
        await aws(setup, net, `s3://${setup.bucket}/${key("aws")}`, join(setup.dir, "down", key("aws"))),
      ),
  ];
  for (let i = 0; i < setup.runs; i++) {
    for (const run of rotated(uploads, i)) await run();
    for (const run of rotated(downloads, i)) await run();
  }
  return {
    network: net.name,
    sizeMiB,
    uploadMs: median(up.map((r) => r.ms)),
    rcloneUploadMs: median(rcloneUp.map((r) => r.ms)),
    awsUploadMs: median(awsUp.map((r) => r.ms)),
    uploadPeakRssMb: Math.max(...up.map((r) => r.peakMb ?? 0)),
    downloadMs: median(down.map((r) => r.ms)),
    rcloneDownloadMs: median(rcloneDown.map((r) => r.ms)),
    awsDownloadMs: median(awsDown.map((r) => r.ms)),
    downloadPeakRssMb: Math.max(...down.map((r) => r.peakMb ?? 0)),
    uploadCpuMs: median(up.map((r) => r.cpuMs)),
    rcloneUploadCpuMs: median(rcloneUp.map((r) => r.cpuMs)),
    awsUploadCpuMs: median(awsUp.map((r) => r.cpuMs)),
    downloadCpuMs: median(down.map((r) => r.cpuMs)),
    rcloneDownloadCpuMs: median(rcloneDown.map((r) => r.cpuMs)),
    awsDownloadCpuMs: median(awsDown.map((r) => r.cpuMs)),
  };
}

/** `items` starting at `by` (mod its length), in the same cyclic order. */
function rotated<T>(items: T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** A transfer with a call budget, and the same without (issue #44: the hand-back must cost nothing). */
export interface BudgetFigures {
  network: string;
  sizeMiB: number;
  /** Budget (s) → median ms of the whole transfer (following job_status when handed back) and the peak RSS; 0 = no budget. */
  upload: Record<number, { ms: number; peakMb: number; handedBack: boolean }>;
  download: Record<number, { ms: number; peakMb: number; handedBack: boolean }>;
}

/**
 * The same upload and download with each budget in `budgets` (0: none), interleaved, `runs` times; a handed-back
 * call is followed to its end with job_status, as a model does. Times are spawn-free (a fresh server per transfer,
 * timed from the call).
 */
export async function measureBudgets(
  setup: TransferSetup,
  net: Network,
  file: string,
  sizeMiB: number,
  budgets: number[],
): Promise<BudgetFigures> {
  const key = `budget-${net.name}-${sizeMiB}.bin`;
  const up: Record<number, { ms: number; peakMb: number; handedBack: boolean }[]> = {};
  const down: Record<number, { ms: number; peakMb: number; handedBack: boolean }[]> = {};
  for (let i = 0; i < setup.runs; i++) {
    for (const budget of rotated(budgets, i))
      (up[budget] ??= []).push(
        await budgetTransfer(setup, net, budget, "upload_file", {
          local_file_path: file,
          bucket_name: setup.bucket,
          object_key: key,
        }),
      );
    for (const budget of rotated(budgets, i))
      (down[budget] ??= []).push(
        await budgetTransfer(setup, net, budget, "get_object", {
          bucket_name: setup.bucket,
          object_key: key,
          mode: "download",
          local_path: `down/${key}`,
          overwrite: true,
        }),
      );
  }
  const summary = (runs: typeof up) =>
    Object.fromEntries(
      Object.entries(runs).map(([b, r]) => [
        Number(b),
        {
          ms: median(r.map((x) => x.ms)),
          peakMb: Math.max(...r.map((x) => x.peakMb)),
          handedBack: r.every((x) => x.handedBack),
        },
      ]),
    );
  return { network: net.name, sizeMiB, upload: summary(up), download: summary(down) };
}

async function budgetTransfer(
  setup: TransferSetup,
  net: Network,
  budget: number,
  name: string,
  args: Record<string, unknown>,
): Promise<{ ms: number; peakMb: number; handedBack: boolean }> {
  const server = await startServer(
    setup.binary,
    { ...serverEnv(setup.store, net), STORE_CALL_BUDGET_SECONDS: String(budget) },
    setup.dir,
  );
  try {
    const started = performance.now();
    let result = await server.call(name, args);
    const handedBack = result.structuredContent?.job?.state === "running";
    while (result.structuredContent?.job?.state === "running")
      result = await server.call("job_status", { job_id: result.structuredContent.job.id });
    if (result.structuredContent?.job && result.structuredContent.job.state !== "done")
      throw new Error(`${name} ended ${result.structuredContent.job.state}`);
    return { ms: performance.now() - started, peakMb: procMemoryMb(server.pid, "VmHWM"), handedBack };
  } finally {
    await server.close();
  }
}
