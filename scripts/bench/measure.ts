/** Small measuring tools for the bench: medians, process memory, timed commands. */
import { closeSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs";

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A field of /proc/PID/status in MB (VmHWM: peak resident set; VmRSS: now). */
export function procMemoryMb(pid: number, field: "VmHWM" | "VmRSS"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))?.[1]);
  return kb / 1024;
}

/** Runs `runs` times and returns each wall time in ms. */
export async function timeRuns(runs: number, once: (i: number) => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await once(i);
    times.push(performance.now() - started);
  }
  return times;
}

/**
 * Runs a command to completion; throws with its stderr when it fails. Returns
 * the wall time in ms. The machine's AWS_* settings are left out (a CA bundle
 * meant for other endpoints breaks rclone's plain-HTTP transport).
 */
export async function timedCommand(cmd: string[], env: Record<string, string> = {}): Promise<number> {
  return (await timedRun(cmd, env)).ms;
}

/** timedCommand, with the command's whole-process CPU (user + system, start-up included) beside its wall time. */
export async function timedRun(
  cmd: string[],
  env: Record<string, string> = {},
): Promise<{ ms: number; cpuMs: number }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("AWS_")));
  const started = performance.now();
  const proc = Bun.spawn(cmd, {
    stdout: "ignore",
    stderr: "pipe",
    env: { ...base, RCLONE_CONFIG: "/dev/null", ...env },
  });
  const code = await proc.exited;
  const took = performance.now() - started;
  if (code !== 0) throw new Error(`${cmd.join(" ")} failed (${code}): ${await new Response(proc.stderr).text()}`);
  const used = proc.resourceUsage();
  const cpuMs = used ? (Number(used.cpuTime.user) + Number(used.cpuTime.system)) / 1000 : Number.NaN;
  return { ms: took, cpuMs };
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** CPU time (user + system) the process has used so far, in ms (/proc/PID/stat, clock ticks of 10 ms). */
export function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the command name: state is field 3, utime 14 and stime 15 (1-based over the whole line).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time (user + system) used so far by a process and everything it started, in ms: its own, its reaped
 * children's (cutime, cstime) and each living descendant's likewise (/proc/PID/task/TID/children). A query's worker
 * process is counted while it lives and, once reaped, in its parent's cutime: the sum does not jump either way.
 */
export function treeCpuMs(pid: number): number {
  let fields: string[];
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return 0; // Ended between its parent's listing and this read: its CPU is in the parent's cutime now.
  }
  // utime, stime, cutime, cstime: fields 14-17 (1-based over the whole line).
  let total = (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10;
  for (const child of childrenOf(pid)) total += treeCpuMs(child);
  return total;
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ").filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** CPU time (user + system) used so far by every process whose command name matches (the store's daemons), in ms. */
export function namedProcessesCpuMs(name: RegExp): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const command = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (!name.test(command)) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/** This process's own CPU time (user + system) so far, in ms. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** A file of `sizeMiB` MiB that no store or filesystem can compress (a random 64 KiB block repeated, each MiB marked). */
export function writeRandomFile(path: string, sizeMiB: number): void {
  const chunk = new Uint8Array(2 ** 20);
  const fd = openSync(path, "w");
  for (let i = 0; i < sizeMiB; i++) {
    crypto.getRandomValues(chunk.subarray(0, 65536));
    for (let j = 65536; j < chunk.length; j += 65536) chunk.copyWithin(j, 0, 65536);
    chunk[0] = i & 0xff;
    writeSync(fd, chunk);
  }
  closeSync(fd);
}

/**
 * Drops `binary`'s pages from the page cache (GNU dd's nocache: posix_fadvise
 * DONTNEED, no root needed), so that each build's server maps its executable
 * from the same state. How its pages got into the cache decides ~5-8 MB of a
 * server's RSS: read whole (a copy, a fresh build's write, a checksum) they sit
 * in large folios that a page fault maps whole, and one build measured ~8 MB
 * above another for no change in its own memory (docs/performance.md).
 */
export function evictFromPageCache(binary: string): void {
  Bun.spawnSync(["dd", `if=${binary}`, "iflag=nocache", "count=0", "status=none"]);
}
