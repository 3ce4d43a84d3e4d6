/** Upload and download through the server vs rclone copyto, with the server's peak RSS per transfer. */
import { join } from "node:path";
import { median, procMemoryMb, timedCommand } from "./measure.ts";
import { startServer } from "./server-session.ts";

export interface TransferFigures {
  sizeMiB: number;
  uploadMs: number;
  rcloneUploadMs: number;
  uploadPeakRssMb: number;
  downloadMs: number;
  rcloneDownloadMs: number;
  downloadPeakRssMb: number;
}

export interface TransferSetup {
  binary: string;
  serverEnv: Record<string, string>;
  rcloneEnv: Record<string, string>;
  bucket: string;
  dir: string;
  runs: number;
}

/** One transfer in a fresh server process, so VmHWM is this transfer's peak alone. */
async function serverTransfer(setup: TransferSetup, name: string, args: Record<string, unknown>): Promise<{ ms: number; peakMb: number }> {
  const server = await startServer(setup.binary, setup.serverEnv, setup.dir);
  try {
    const started = performance.now();
    await server.call(name, args);
    const ms = performance.now() - started;
    return { ms, peakMb: procMemoryMb(server.pid, "VmHWM") };
  } finally {
    await server.close();
  }
}

export async function measureTransfer(setup: TransferSetup, file: string, sizeMiB: number): Promise<TransferFigures> {
  const ours = `ours-${sizeMiB}.bin`;
  const theirs = `rclone-${sizeMiB}.bin`;
  const up: { ms: number; peakMb: number }[] = [];
  const down: { ms: number; peakMb: number }[] = [];
  const rcloneUp: number[] = [];
  const rcloneDown: number[] = [];
  // Interleaved, so drift on a shared machine hits both sides alike.
  for (let i = 0; i < setup.runs; i++) {
    up.push(await serverTransfer(setup, "upload_file", { local_file_path: file, bucket_name: setup.bucket, object_key: ours }));
    rcloneUp.push(await timedCommand(["rclone", "copyto", "--ignore-times", join(setup.dir, file), `bench:${setup.bucket}/${theirs}`], setup.rcloneEnv));
    down.push(await serverTransfer(setup, "get_object", { bucket_name: setup.bucket, object_key: ours, mode: "download", local_path: `down/${ours}`, overwrite: true }));
    rcloneDown.push(await timedCommand(["rclone", "copyto", "--ignore-times", `bench:${setup.bucket}/${theirs}`, join(setup.dir, "down", theirs)], setup.rcloneEnv));
  }
  return {
    sizeMiB,
    uploadMs: median(up.map((r) => r.ms)),
    rcloneUploadMs: median(rcloneUp),
    uploadPeakRssMb: Math.max(...up.map((r) => r.peakMb)),
    downloadMs: median(down.map((r) => r.ms)),
    rcloneDownloadMs: median(rcloneDown),
    downloadPeakRssMb: Math.max(...down.map((r) => r.peakMb)),
  };
}
