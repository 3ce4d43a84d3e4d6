/** Turns the bench figures into a Markdown table with each target and whether it is met. */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { round } from "./measure.ts";
import type { TransferFigures } from "./transfers.ts";

export interface Figures {
  quick: boolean;
  machine: string;
  coldStartMs: number;
  floorColdStartMs: number;
  nodeColdStartMs: number;
  binaryMb: number;
  floorBinaryMb: number;
  idleRssMb: number;
  afterFirstCallRssMb: number;
  transfers: TransferFigures[];
  rangedBigMs: number;
  rangedSmallMs: number;
  listPageMs: number;
  listAllMs: number;
  rcloneList1kMs: number;
  rcloneList10kMs: number;
  /** The tools/list answer with every tool enabled (--allow-delete), JSON bytes. */
  toolsListBytes: number;
}

type Row = [figure: string, value: string, reference: string, ratio: string, target: string, met: string];

const ms = (v: number) => `${round(v, 0)} ms`;
const mb = (v: number) => `${round(v, 0)} MB`;
const x = (v: number) => `${round(v)}×`;
const met = (ok: boolean | undefined) => (ok === undefined ? "" : ok ? "yes" : "**no**");
const mibPerS = (sizeMiB: number, t: number) => `${round(sizeMiB / (t / 1000), 0)} MiB/s`;

export function rows(f: Figures): Row[] {
  const out: Row[] = [
    ["cold start (spawn → tools/list answered)", ms(f.coldStartMs), `Bun floor ${ms(f.floorColdStartMs)}`, x(f.coldStartMs / f.floorColdStartMs), "≤ 80 ms and ≤ 3×", met(f.coldStartMs <= 80 && f.coldStartMs / f.floorColdStartMs <= 3)],
    ["cold start, same code bundled for Node", ms(f.nodeColdStartMs), `ours ${ms(f.coldStartMs)}`, x(f.nodeColdStartMs / f.coldStartMs), "(reference)", ""],
  ];
  for (const t of f.transfers) {
    // Throughput ratio: rclone's time over ours, so ≥ 1 means we are at least as fast.
    out.push(
      [`upload ${t.sizeMiB} MiB (upload_file)`, `${ms(t.uploadMs)} (${mibPerS(t.sizeMiB, t.uploadMs)})`, `rclone copyto ${ms(t.rcloneUploadMs)}`, x(t.rcloneUploadMs / t.uploadMs), "throughput ≥ 1.0× rclone", met(t.rcloneUploadMs / t.uploadMs >= 1)],
      [`upload ${t.sizeMiB} MiB: server peak RSS (VmHWM)`, mb(t.uploadPeakRssMb), "", "", "≤ 150 MB", met(t.uploadPeakRssMb <= 150)],
      [`download ${t.sizeMiB} MiB (get_object download)`, `${ms(t.downloadMs)} (${mibPerS(t.sizeMiB, t.downloadMs)})`, `rclone copyto ${ms(t.rcloneDownloadMs)}`, x(t.rcloneDownloadMs / t.downloadMs), "throughput ≥ 1.0× rclone", met(t.rcloneDownloadMs / t.downloadMs >= 1)],
      [`download ${t.sizeMiB} MiB: server peak RSS (VmHWM)`, mb(t.downloadPeakRssMb), "", "", "≤ 150 MB", met(t.downloadPeakRssMb <= 150)],
    );
  }
  out.push(
    ["ranged read: first 1 MiB of the 256 MiB object", ms(f.rangedBigMs), `1 MiB object ${ms(f.rangedSmallMs)}`, x(f.rangedBigMs / f.rangedSmallMs), "≤ 1.3", met(f.rangedBigMs / f.rangedSmallMs <= 1.3)],
    ["list one page of 1,000 keys (10,000-key bucket)", ms(f.listPageMs), `rclone lsf 1,000 keys ${ms(f.rcloneList1kMs)}`, x(f.listPageMs / f.rcloneList1kMs), "≤ 1.2×", met(f.listPageMs / f.rcloneList1kMs <= 1.2)],
    ["page through all 10,000 keys", ms(f.listAllMs), `rclone lsf 10,000 keys ${ms(f.rcloneList10kMs)}`, x(f.listAllMs / f.rcloneList10kMs), "≤ 1.2×", met(f.listAllMs / f.rcloneList10kMs <= 1.2)],
    ["tools/list with every tool enabled (JSON)", `${round(f.toolsListBytes / 1000, 1)} KB`, "", "", "≤ 20 KB", met(f.toolsListBytes <= 20_000)],
    ["idle memory after tools/list (VmRSS)", mb(f.idleRssMb), `after the first S3 call ${mb(f.afterFirstCallRssMb)}`, "", "", ""],
    ["binary size", mb(f.binaryMb), `Bun floor ${mb(f.floorBinaryMb)}`, x(f.binaryMb / f.floorBinaryMb), "", ""],
  );
  return out;
}

export function writeReport(f: Figures, path: string): string {
  const table = [
    "| figure | ours | reference (same run) | ratio | target | met |",
    "|---|---|---|---|---|---|",
    ...rows(f).map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
  const text = `# Bench results${f.quick ? " (quick run: fewer repetitions, no 1 GiB file)" : ""}

Written by \`bun run bench\` on ${new Date().toISOString().slice(0, 10)}.
Machine: ${f.machine}.
Each time is a median over several runs; each reference was measured in the same run. Transfer ratios are rclone's time over ours (≥ 1 means at least as fast); the others are ours over the reference.

${table}
${history()}`;
  writeFileSync(path, text);
  return text;
}

/** The hand-kept record of design changes and their before/after figures, appended to every report. */
function history(): string {
  const file = join(import.meta.dir, "history.md");
  return existsSync(file) ? `\n${readFileSync(file, "utf8")}` : "";
}
