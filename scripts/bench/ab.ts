/**
 * A/B: this tree's server (A) against another build (B = BENCH_AGAINST: a
 * binary's path, or a git ref built once into .tmp/bench-builds), shape by
 * shape, alternating A and B within each round so both meet the same
 * machine, on loopback and through the WAN model. Reports each shape's B/A
 * time ratio (the median of the rounds' ratios, and their spread) and both
 * peaks. Absolute times on these machines vary more between runs than the
 * regressions worth catching; ratios taken this way do not.
 */

import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { abShapes, SMALL_COUNT, SMALL_OBJECTS, type Timed } from "./ab-shapes.ts";
import { evictFromPageCache, median, procCpuMs, procMemoryMb, writeRandomFile } from "./measure.ts";
import { startServer } from "./server-session.ts";
import { putSmallObjects } from "./small-objects.ts";
import { type Network, type Store, serverEnv } from "./transfers.ts";

const ROOT = resolve(import.meta.dir, "../..");
const BUCKET = "bench-ab";

/** The other build's binary: `against` itself when it is a file, else the git ref compiled once (cached by commit). */
export function buildAgainst(against: string): string {
  if (existsSync(against)) return resolve(against);
  const sha = Bun.spawnSync(["git", "rev-parse", "--verify", `${against}^{commit}`], { cwd: ROOT })
    .stdout.toString()
    .trim();
  if (!sha) throw new Error(`BENCH_AGAINST=${against} is neither a file nor a git ref`);
  // Not under node_modules: Bun will not run a tree's build macros from there.
  const cache = join(ROOT, ".tmp", "bench-builds");
  const binary = join(cache, `store-mcp-server-${sha}`);
  if (existsSync(binary)) return binary;
  const tree = join(cache, `tree-${sha}`);
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  const run = (cmd: string[], cwd: string) => {
    const r = Bun.spawnSync(cmd, { cwd, stdout: "inherit", stderr: "inherit" });
    if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed`);
  };
  run(["git", "worktree", "add", "--detach", "--force", tree, sha], ROOT);
  try {
    // The ref's own lock file decides its packages (the same store bun keeps for this tree).
    run(["bun", "install", "--frozen-lockfile"], tree);
    run(["bun", "scripts/build-local.ts", binary], tree);
  } finally {
    run(["git", "worktree", "remove", "--force", tree], ROOT);
  }
  return binary;
}

export interface AbRow {
  network: string;
  shape: string;
  /** Median of the rounds' B/A ratios from the server's spawn to the call's result, and the lowest and highest of them. */
  ratio: number;
  spread: [number, number];
  /** The same for the call alone, on a server already started (and answering tools/list). */
  callRatio: number;
  callSpread: [number, number];
  /** The same for the server's CPU during the call (/proc: every thread, the call alone): > 1, this tree spends less. */
  cpuRatio: number;
  cpuSpread: [number, number];
  aMs: number;
  bMs: number;
  aPeakMb: number;
  bPeakMb: number;
}

export async function measureAb(
  a: string,
  b: string,
  store: Store & { endpoint: string },
  networks: Network[],
  work: string,
  rounds: number,
): Promise<AbRow[]> {
  const dir = join(work, "ab");
  rmSync(join(dir, "down"), { recursive: true, force: true });
  mkdirSync(join(dir, "down"), { recursive: true });
  // Both executables start from the same page-cache state: how a file's pages were cached shifts a server's peak.
  for (const binary of [a, b]) evictFromPageCache(binary);
  const sdk = new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  await sdk.send(new CreateBucketCommand({ Bucket: BUCKET }));
  writeRandomFile(join(dir, "f256.bin"), 256);
  await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: "tiny.csv", Body: "a,b\n1,x\n2,y\n" }));
  // The object the download and copy shapes read, there whether or not the upload shape runs.
  await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: "f256.bin", Body: readFileSync(join(dir, "f256.bin")) }));
  // Its twin stored in 8 MiB parts, as S3 tools store an object that large: its ETag is no MD5, so a copy hashes it.
  await putInParts(sdk, "f256-parts.bin", readFileSync(join(dir, "f256.bin")), 8 * 2 ** 20);
  // Each run on a server of its own, with its own state directory: the kept-transfer records are written as users' are.
  const session = async (binary: string, net: Network, extra: Record<string, string> = {}) => {
    const state = join(dir, `state-${Math.random().toString(36).slice(2)}`);
    return startServer(
      binary,
      { ...serverEnv(store, net), STORE_STATE_DIR: state, STORE_CALL_BUDGET_SECONDS: "0", ...extra },
      dir,
    );
  };
  const timed = async (
    binary: string,
    net: Network,
    call: (s: Awaited<ReturnType<typeof session>>) => Promise<unknown>,
    extra?: Record<string, string>,
  ): Promise<Timed> => {
    const spawned = performance.now();
    const s = await session(binary, net, extra);
    try {
      const cpuBefore = procCpuMs(s.pid);
      const started = performance.now();
      await call(s);
      const now = performance.now();
      const cpuMs = procCpuMs(s.pid) - cpuBefore;
      return { ms: now - spawned, callMs: now - started, cpuMs, peakMb: procMemoryMb(s.pid, "VmHWM") };
    } finally {
      await s.close();
    }
  };
  // Copies between stores: the same Ceph named a second time, so every byte goes through the server.
  const twoStores = (net: Network) => ({
    STORE_STORES: "other",
    STORE_OTHER_ENDPOINT_URL: net.endpoint,
    STORE_OTHER_ACCESS_KEY_ID: store.accessKeyId,
    STORE_OTHER_SECRET_ACCESS_KEY: store.secretAccessKey,
    STORE_OTHER_REGION: store.region,
    STORE_OTHER_PROVIDER: "ceph",
  });
  // BENCH_AB_SHAPES=upload,download: only the shapes whose names contain one of these.
  const only = process.env.BENCH_AB_SHAPES?.split(",").filter(Boolean);
  const shapes = abShapes({ bucket: BUCKET, dir, timed, twoStores }).filter(
    (s) => !only || only.some((o) => s.name.includes(o)),
  );
  if (shapes.some((s) => s.name.includes(SMALL_OBJECTS))) await putSmallObjects(sdk, BUCKET, "small", SMALL_COUNT);
  const rows: AbRow[] = [];
  for (const net of networks) {
    for (const shape of shapes) {
      // One untimed run each: the store's pools and the page cache warmed for both.
      await shape.run(a, net);
      await shape.run(b, net);
      const as: number[] = [];
      const bs: number[] = [];
      const ratios: number[] = [];
      const callRatios: number[] = [];
      const cpuRatios: number[] = [];
      let aPeak = 0;
      let bPeak = 0;
      for (let round = 0; round < rounds; round++) {
        // Alternate which goes first, so neither always meets the other's leftovers.
        const order = round % 2 === 0 ? ([a, b] as const) : ([b, a] as const);
        const got = new Map<string, Timed>();
        for (const bin of order) got.set(bin, await shape.run(bin, net));
        const ra = got.get(a)!;
        const rb = got.get(b)!;
        as.push(ra.ms);
        bs.push(rb.ms);
        ratios.push(rb.ms / ra.ms);
        callRatios.push(rb.callMs / ra.callMs);
        cpuRatios.push(rb.cpuMs / Math.max(ra.cpuMs, 1));
        aPeak = Math.max(aPeak, ra.peakMb);
        bPeak = Math.max(bPeak, rb.peakMb);
      }
      rows.push({
        network: net.name,
        shape: shape.name,
        ratio: median(ratios),
        spread: [Math.min(...ratios), Math.max(...ratios)],
        callRatio: median(callRatios),
        callSpread: [Math.min(...callRatios), Math.max(...callRatios)],
        cpuRatio: median(cpuRatios),
        cpuSpread: [Math.min(...cpuRatios), Math.max(...cpuRatios)],
        aMs: median(as),
        bMs: median(bs),
        aPeakMb: aPeak,
        bPeakMb: bPeak,
      });
      process.stderr.write(
        `bench: ab ${net.name} ${shape.name}: B/A ${median(ratios).toFixed(2)} from spawn, ${median(callRatios).toFixed(2)} the call alone, CPU ${median(cpuRatios).toFixed(2)}\n`,
      );
    }
  }
  return rows;
}

export function abReport(rows: AbRow[], against: string, rounds: number): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return [
    "",
    `## A/B: this tree (A) against ${against} (B)`,
    "",
    `Each shape ${rounds} rounds, A and B alternating (which goes first alternates too), each run on a fresh server with its own state directory. B/A > 1: this tree is faster. A ratio is the median of the rounds' ratios, with their lowest and highest. "From spawn" times the server's start and the call (what a client's first call costs; each build pays for what it loads, at its start or during the call); "call alone" only the call, on a server that has answered tools/list.`,
    "",
    "| network | shape | B/A from spawn (spread) | B/A call alone (spread) | CPU B/A, the call (spread) | A | B | A peak | B peak |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.network} | ${r.shape} | ${r.ratio.toFixed(2)} (${r.spread[0].toFixed(2)}-${r.spread[1].toFixed(2)}) | ${r.callRatio.toFixed(2)} (${r.callSpread[0].toFixed(2)}-${r.callSpread[1].toFixed(2)}) | ${r.cpuRatio.toFixed(2)} (${r.cpuSpread[0].toFixed(2)}-${r.cpuSpread[1].toFixed(2)}) | ${s(r.aMs)} | ${s(r.bMs)} | ${Math.round(r.aPeakMb)} MB | ${Math.round(r.bPeakMb)} MB |`,
    ),
    "",
  ].join("\n");
}

/** `body` stored as `key` in parts of `partSize`. */
async function putInParts(sdk: S3Client, key: string, body: Uint8Array, partSize: number): Promise<void> {
  const { UploadId } = await sdk.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
  const parts: { PartNumber: number; ETag: string | undefined }[] = [];
  for (let at = 0, n = 1; at < body.length; at += partSize, n++) {
    const part = body.subarray(at, Math.min(body.length, at + partSize));
    const out = await sdk.send(
      new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: n, Body: part }),
    );
    parts.push({ PartNumber: n, ETag: out.ETag });
  }
  await sdk.send(
    new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
  );
}
