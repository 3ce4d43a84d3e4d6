/** Turns the bench figures into a Markdown table with each target and whether it is met. */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { round } from "./measure.ts";
import type { RemoteLoadFigures } from "./remote-load.ts";
import type { BudgetFigures, TransferFigures } from "./transfers.ts";
import type { WanModel } from "./wan-proxy.ts";

/** Single-request reads and listings through one network. */
export interface ReadFigures {
  network: string;
  rangedBigMs: number;
  rangedSmallMs: number;
  listPageMs: number;
  listAllMs: number;
  rcloneList1kMs: number;
  rcloneList10kMs: number;
}

export interface Figures {
  quick: boolean;
  machine: string;
  coldStartMs: number;
  /** The same with a 2026-07-28 opening (server/discover, tools/list). */
  coldStartModernMs: number;
  versionMs: number;
  floorVersionMs: number;
  floorColdStartMs: number;
  nodeColdStartMs: number;
  /** Through env(1), one store and five (issue #26). */
  coldStartOneStoreMs: number;
  coldStartFiveStoresMs: number;
  binaryMb: number;
  floorBinaryMb: number;
  idleRssMb: number;
  afterFirstCallRssMb: number;
  transfers: TransferFigures[];
  /** The same transfer with a call budget and without (issue #44). */
  budget?: BudgetFigures;
  reads: ReadFigures[];
  wan: WanModel;
  remoteLoad: RemoteLoadFigures;
  /** `rclone version` and `aws --version`: each reference CLI's start-up, for context. */
  rcloneStartMs: number;
  awsStartMs: number;
  /** The tools/list answer with every tool enabled (--allow-delete), JSON bytes. */
  toolsListBytes: number;
  /** The same with the default configuration (no flags). */
  toolsListDefaultBytes: number;
}

type Row = [figure: string, value: string, reference: string, ratio: string, target: string, met: string];

const ms = (v: number) => `${round(v, 0)} ms`;
const mb = (v: number) => `${round(v, 0)} MB`;
const x = (v: number) => `${round(v)}×`;
const met = (ok: boolean | undefined) => (ok === undefined ? "" : ok ? "yes" : "**no**");
const mibPerS = (sizeMiB: number, t: number) => `${round(sizeMiB / (t / 1000), 0)} MiB/s`;

/** CPU ms spent on `sizeMiB` as CPU-seconds per GiB. */
const perGiB = (cpuMs: number, sizeMiB: number) => ((cpuMs / 1000) * (1024 / sizeMiB)).toFixed(2);

export function rows(f: Figures): Row[] {
  const out: Row[] = [
    [
      "cold start (spawn → tools/list answered)",
      ms(f.coldStartMs),
      `Bun floor ${ms(f.floorColdStartMs)}`,
      x(f.coldStartMs / f.floorColdStartMs),
      "≤ 40 ms (issue #43)",
      met(f.coldStartMs <= 40),
    ],
    [
      "`--version` (spawn → exit)",
      ms(f.versionMs),
      `Bun floor ${ms(f.floorVersionMs)}`,
      x(f.versionMs / f.floorVersionMs),
      "≤ 15 ms",
      met(f.versionMs <= 15),
    ],
    [
      "cold start, a 2026-07-28 client (server/discover → tools/list answered)",
      ms(f.coldStartModernMs),
      `initialize → tools/list ${ms(f.coldStartMs)}`,
      x(f.coldStartModernMs / f.coldStartMs),
      "(reference)",
      "",
    ],
    [
      "cold start, same code bundled for Node",
      ms(f.nodeColdStartMs),
      `ours ${ms(f.coldStartMs)}`,
      x(f.nodeColdStartMs / f.coldStartMs),
      "(reference)",
      "",
    ],
    [
      "cold start with five stores configured",
      ms(f.coldStartFiveStoresMs),
      `one store ${ms(f.coldStartOneStoreMs)}`,
      `+${ms(f.coldStartFiveStoresMs - f.coldStartOneStoreMs)}`,
      "≤ +10 ms",
      met(f.coldStartFiveStoresMs - f.coldStartOneStoreMs <= 10),
    ],
  ];
  for (const t of f.transfers) {
    // Throughput ratios are a reference's time over ours, so ≥ 1 means we are at least as fast.
    // Through the WAN model the target is the faster of the two references.
    const wanNet = t.network === "wan";
    const net = wanNet ? "WAN model" : "loopback";
    const transfer = (dir: "upload" | "download", ours: number, rclone: number, aws: number, peak: number): Row[] => {
      const reference = wanNet ? Math.min(rclone, aws) : rclone;
      const tool = dir === "upload" ? "upload_file" : "get_object download";
      return [
        [
          `${dir} ${t.sizeMiB} MiB, ${net} (${tool})`,
          `${ms(ours)} (${mibPerS(t.sizeMiB, ours)})`,
          `rclone ${mibPerS(t.sizeMiB, rclone)}, aws ${mibPerS(t.sizeMiB, aws)}`,
          x(reference / ours),
          wanNet ? "≥ 1.0× the faster" : "≥ 1.0× rclone",
          met(reference / ours >= 1),
        ],
        [`${dir} ${t.sizeMiB} MiB, ${net}: server peak RSS (VmHWM)`, mb(peak), "", "", "≤ 150 MB", met(peak <= 150)],
      ];
    };
    // CPU efficiency is rclone's CPU over ours (≥ 1: we spend no more); per GiB, the call alone against rclone's process.
    const cpu = (dir: "upload" | "download", ours: number, rclone: number, aws: number, target: number): Row => [
      `${dir} ${t.sizeMiB} MiB, ${net}: CPU per GiB (the call; references whole-process)`,
      `${perGiB(ours, t.sizeMiB)} s`,
      `rclone ${perGiB(rclone, t.sizeMiB)} s, aws ${perGiB(aws, t.sizeMiB)} s`,
      x(rclone / ours),
      `≥ ${target.toFixed(1)}× rclone`,
      met(rclone / ours >= target),
    ];
    out.push(
      ...transfer("upload", t.uploadMs, t.rcloneUploadMs, t.awsUploadMs, t.uploadPeakRssMb),
      cpu("upload", t.uploadCpuMs, t.rcloneUploadCpuMs, t.awsUploadCpuMs, 1.5),
      ...transfer("download", t.downloadMs, t.rcloneDownloadMs, t.awsDownloadMs, t.downloadPeakRssMb),
      cpu("download", t.downloadCpuMs, t.rcloneDownloadCpuMs, t.awsDownloadCpuMs, 1),
    );
  }
  if (f.budget) {
    const b = f.budget;
    for (const dir of ["upload", "download"] as const) {
      const none = b[dir][0]!;
      for (const budget of Object.keys(b[dir])
        .map(Number)
        .filter((n) => n > 0)) {
        const with_ = b[dir][budget]!;
        out.push(
          [
            `${dir} ${b.sizeMiB} MiB, WAN model, call budget ${budget} s${with_.handedBack ? " (handed back, followed with job_status)" : " (done within it)"}`,
            ms(with_.ms),
            `no budget ${ms(none.ms)}`,
            x(with_.ms / none.ms),
            "≤ 1.1×",
            met(with_.ms / none.ms <= 1.1),
          ],
          [
            `${dir} ${b.sizeMiB} MiB, WAN model, call budget ${budget} s: server peak RSS`,
            mb(with_.peakMb),
            `no budget ${mb(none.peakMb)}`,
            x(with_.peakMb / none.peakMb),
            "unchanged (≤ 1.1×)",
            met(with_.peakMb / none.peakMb <= 1.1),
          ],
        );
      }
    }
  }
  for (const r of f.reads) {
    const net = r.network === "wan" ? "WAN model" : "loopback";
    out.push(
      [
        `ranged read, ${net}: first 1 MiB of the 256 MiB object`,
        ms(r.rangedBigMs),
        `1 MiB object ${ms(r.rangedSmallMs)}`,
        x(r.rangedBigMs / r.rangedSmallMs),
        "≤ 1.3",
        met(r.rangedBigMs / r.rangedSmallMs <= 1.3),
      ],
      [
        `list one page of 1,000 keys, ${net}`,
        ms(r.listPageMs),
        `rclone lsf 1,000 keys ${ms(r.rcloneList1kMs)}`,
        x(r.listPageMs / r.rcloneList1kMs),
        "≤ 1.2×",
        met(r.listPageMs / r.rcloneList1kMs <= 1.2),
      ],
      [
        `page through all 10,000 keys, ${net}`,
        ms(r.listAllMs),
        `rclone lsf 10,000 keys ${ms(r.rcloneList10kMs)}`,
        x(r.listAllMs / r.rcloneList10kMs),
        "≤ 1.2×",
        met(r.listAllMs / r.rcloneList10kMs <= 1.2),
      ],
    );
  }
  const load = f.remoteLoad;
  const perf = (l: RemoteLoadFigures["http"]) =>
    `${round(l.callsPerS, 0)} calls/s, p50 ${ms(l.p50Ms)}, p99 ${ms(l.p99Ms)}`;
  out.push(
    [
      `remote mode: ${load.clients} clients × ${load.callsPerClient} calls (list_objects, head_object) over HTTP`,
      perf(load.http),
      `one stdio connection, ${load.clients} at a time: ${perf(load.stdio)}`,
      x(load.http.callsPerS / load.stdio.callsPerS),
      "(throughput, HTTP / stdio)",
      "",
    ],
    [
      `the same over HTTP from 2026-07-28 clients (per request)`,
      perf(load.httpModern),
      `2025 clients ${perf(load.http)}`,
      x(load.httpModern.callsPerS / load.http.callsPerS),
      "(throughput, 2026 / 2025)",
      "",
    ],
    [
      "remote mode under that load: server CPU per call, HTTP 2025 ÷ stdio",
      `${load.http.serverCpuMsPerCall.toFixed(2)} ms`,
      `stdio ${load.stdio.serverCpuMsPerCall.toFixed(2)} ms`,
      x(load.http.serverCpuMsPerCall / load.stdio.serverCpuMsPerCall),
      "≤ 1.3× (issue #45)",
      met(load.http.serverCpuMsPerCall / load.stdio.serverCpuMsPerCall <= 1.3),
    ],
    [
      "remote mode under that load: server CPU per call, HTTP 2026-07-28 ÷ stdio",
      `${load.httpModern.serverCpuMsPerCall.toFixed(2)} ms`,
      `stdio ${load.stdio.serverCpuMsPerCall.toFixed(2)} ms`,
      x(load.httpModern.serverCpuMsPerCall / load.stdio.serverCpuMsPerCall),
      "≤ 1.3× (issue #45)",
      met(load.httpModern.serverCpuMsPerCall / load.stdio.serverCpuMsPerCall <= 1.3),
    ],
    [
      "remote mode under that load: server peak RSS (VmHWM)",
      mb(load.http.peakMb),
      `stdio ${mb(load.stdio.peakMb)}`,
      "",
      "",
      "",
    ],
  );
  out.push(
    [
      "tools/list by default (JSON, no flags)",
      `${round(f.toolsListDefaultBytes / 1024, 1)} KiB`,
      "",
      "",
      // Issue #69's budgets (test/e2e/tool-list-budget.test.ts holds them, with and without tasks declared).
      "≤ 20 KiB (issue #69)",
      met(f.toolsListDefaultBytes <= 20 * 1024),
    ],
    [
      "tools/list with every tool enabled (JSON, --allow-delete --allow-admin)",
      `${round(f.toolsListBytes / 1024, 1)} KiB`,
      "",
      "",
      "≤ 27 KiB (issue #69)",
      met(f.toolsListBytes <= 27 * 1024),
    ],
    [
      "idle memory after tools/list (VmRSS)",
      mb(f.idleRssMb),
      `after the first S3 call ${mb(f.afterFirstCallRssMb)}`,
      "",
      "",
      "",
    ],
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
Networks: **loopback** (every client straight to Ceph RGW on 127.0.0.1) and the **WAN model** (scripts/bench/wan-proxy.ts in front of the same Ceph: every chunk delivered ${f.wan.delayMs} ms after it arrived, each way, and at most ${f.wan.windowBytes / 1024} KiB in flight per connection and direction: a ${2 * f.wan.delayMs} ms round trip, ~${round(f.wan.windowBytes / 2 ** 20 / ((2 * f.wan.delayMs) / 1000), 0)} MiB/s per connection). Every client under test goes through the same network.
Each time is a median over several runs; each reference was measured in the same run. Transfer ratios are the reference's time over ours (≥ 1 means at least as fast). A reference's time is its whole command, as a user runs it (its start-up alone: \`rclone version\` ${ms(f.rcloneStartMs)}, \`aws --version\` ${ms(f.awsStartMs)}); ours is the tool call in a running server, as a client makes it (a cold start adds the figure above once per session). The other ratios are ours over the reference.

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
