/**
 * Looking inside objects (#47): search_objects over 2,000 small text objects
 * and 5 logs of 20 MiB (2 of them gzip'd) against what a user does without
 * it — download the prefix with the faster of `aws s3 sync` and `rclone copy`
 * (each at 32 transfers at once), then `grep -r` (and `zgrep` for the .gz
 * files) — on loopback and through the WAN model; the same matches found.
 * Writes scripts/bench/results-look.md.
 *   BENCH_ONLY=look bun scripts/bench/index.ts   (this part alone)
 */

import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { median, procMemoryMb, timedCommand } from "./measure.ts";
import { startServer } from "./server-session.ts";
import { AWS_CLI, type Network, rcloneEnv, type Store, serverEnv } from "./transfers.ts";

export interface LookRow {
  network: string;
  oursMs: number;
  oursPeakMb: number;
  matches: number;
  awsMs: number;
  rcloneMs: number;
  greps: number;
}

const SMALL = 2000;
const LOGS = 5;
const LOG_MIB = 20;
const NEEDLE = "order 81723 failed";
const BUCKET = "bench-look";
const RUNS = 3;

/** Log lines, one in `every` naming the needle; `seed` varies the rest. */
function logText(bytes: number, every: number, seed: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `2026-11-${String((i % 28) + 1).padStart(2, "0")}T10:${String(i % 60).padStart(2, "0")}:00Z host-${(i * seed) % 97} GET /api/items/${i * 7 + seed} ${i % every === every - 1 ? `500 ${NEEDLE}` : "200 ok"} ${(i * 13) % 1000}ms`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

export async function seedLook(store: Store & { endpoint: string }): Promise<number> {
  const sdk = new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  await sdk.send(new CreateBucketCommand({ Bucket: BUCKET }));
  let expected = 0;
  const count = (text: string) => text.split(NEEDLE).length - 1;
  const puts: (() => Promise<unknown>)[] = [];
  for (let i = 0; i < SMALL; i++) {
    // One small object in ten names the needle (once or twice): every match fits in one answer.
    const text = logText(1024 + ((i * 977) % 7168), i % 10 === 0 ? 50 : 1e9, i + 1);
    expected += count(text);
    puts.push(() =>
      sdk.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `logs/app-${i % 20}/part-${String(i).padStart(4, "0")}.log`,
          Body: text,
        }),
      ),
    );
  }
  for (let i = 0; i < LOGS; i++) {
    const text = logText(LOG_MIB * 2 ** 20, 5000, 1000 + i);
    expected += count(text);
    const gz = i >= LOGS - 2;
    puts.push(() =>
      sdk.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `logs/big-${i}.log${gz ? ".gz" : ""}`,
          Body: gz ? gzipSync(text) : text,
        }),
      ),
    );
  }
  for (let at = 0; at < puts.length; at += 32) await Promise.all(puts.slice(at, at + 32).map((p) => p()));
  return expected;
}

export async function measureLook(
  binary: string,
  store: Store,
  net: Network,
  work: string,
  expected: number,
): Promise<LookRow> {
  const ours: number[] = [];
  let peak = 0;
  let matches = 0;
  for (let r = 0; r < RUNS; r++) {
    const server = await startServer(binary, serverEnv(store, net), work);
    try {
      const started = performance.now();
      const got = await server.call("search_objects", {
        bucket_name: BUCKET,
        prefix: "logs/",
        pattern: NEEDLE,
        max_matches: 1000,
      });
      ours.push(performance.now() - started);
      matches = got.structuredContent!.matches.length;
      if (got.structuredContent!.truncated || matches !== Math.min(expected, 1000))
        throw new Error(
          `search_objects found ${matches} (truncated ${got.structuredContent!.truncated}), expected ${expected}`,
        );
      peak = Math.max(peak, procMemoryMb(server.pid, "VmHWM"));
    } finally {
      await server.close();
    }
  }
  const awsConfig = join(work, "aws-look.cfg");
  writeFileSync(awsConfig, "[default]\ns3 =\n  max_concurrent_requests = 32\n");
  const awsEnv = {
    AWS_ACCESS_KEY_ID: store.accessKeyId,
    AWS_SECRET_ACCESS_KEY: store.secretAccessKey,
    AWS_DEFAULT_REGION: store.region,
    AWS_CONFIG_FILE: awsConfig,
    AWS_EC2_METADATA_DISABLED: "true",
  };
  let greps = 0;
  const downloadAndGrep = async (download: (dir: string) => Promise<number>) => {
    const times: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const dir = join(work, `look-down-${r}`);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const started = performance.now();
      await download(dir);
      const grep = Bun.spawn(
        ["sh", "-c", `grep -rn --exclude='*.gz' -e "$0" . ; find . -name '*.gz' -exec zgrep -n -e "$0" {} +`, NEEDLE],
        { cwd: dir, stdout: "pipe", stderr: "ignore" },
      );
      const out = await new Response(grep.stdout).text();
      await grep.exited;
      times.push(performance.now() - started);
      greps = out.split("\n").filter((l) => l.includes(NEEDLE)).length;
      rmSync(dir, { recursive: true, force: true });
    }
    if (greps !== expected) throw new Error(`download + grep found ${greps}, expected ${expected}`);
    return median(times);
  };
  const awsMs = await downloadAndGrep((dir) =>
    timedCommand(
      [AWS_CLI, "--endpoint-url", net.endpoint, "s3", "sync", `s3://${BUCKET}/logs/`, dir, "--only-show-errors"],
      awsEnv,
    ),
  );
  const rcloneMs = await downloadAndGrep((dir) =>
    timedCommand(
      ["rclone", "copy", `bench:${BUCKET}/logs`, dir, "--transfers", "32", "--checkers", "32"],
      rcloneEnv(store, net),
    ),
  );
  return { network: net.name, oursMs: median(ours), oursPeakMb: peak, matches, awsMs, rcloneMs, greps };
}

export function lookReport(rows: LookRow[], machine: string): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return [
    "# Looking inside objects: results",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}. search_objects over ${SMALL.toLocaleString("en-US")} text objects of 1-8 KiB and ${LOGS} logs of ${LOG_MIB} MiB (2 gzip'd), one pattern, every match (median of ${RUNS}); the reference downloads the prefix (32 transfers at once) and runs \`grep -rn\` and \`zgrep -n\` on it. Both find the same lines.`,
    "",
    "| network | search_objects | peak RSS | aws s3 sync + grep | rclone copy + grep | vs the faster | target |",
    "|---|---|---|---|---|---|---|",
    ...rows.map((r) => {
      const ratio = Math.min(r.awsMs, r.rcloneMs) / r.oursMs;
      return `| ${r.network} | ${s(r.oursMs)} (${r.matches} matches) | ${Math.round(r.oursPeakMb)} MB | ${s(r.awsMs)} | ${s(r.rcloneMs)} | ${ratio.toFixed(2)}× | ≥ 1.5× ${ratio >= 1.5 ? "yes" : "**no**"}, ≤ 150 MB ${r.oursPeakMb <= 150 ? "yes" : "**no**"} |`;
    }),
    "",
  ].join("\n");
}
