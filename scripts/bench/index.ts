/**
 * `bun run bench`: measures the compiled server against references taken in
 * the same run (Bun's floor, a Node bundle of the same code, rclone, the AWS
 * CLI) on a throwaway Ceph RGW, on loopback and through the WAN model
 * (wan-proxy.ts), prints the figures and writes scripts/bench/results.md.
 * Set BENCH_QUICK=1 for a short run (fewer repetitions, no 1 GiB file);
 * BENCH_ONLY=bulk for the bulk jobs alone (bulk.ts), BENCH_ONLY=stores for copies between stores (stores.ts),
 * BENCH_ONLY=team for a team's load on a remote deployment (team-load.ts),
 * BENCH_ONLY=ab with BENCH_AGAINST=<binary or git ref> for this tree against another build, alternating (ab.ts).
 */

import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { compile } from "../lib/compile.ts";
import { startCephRgw } from "../s3/local-servers.ts";
import { abReport, buildAgainst, measureAb } from "./ab.ts";
import {
  type BulkRow,
  bulkReport,
  makeBulkTree,
  measureBulkTransfers,
  measureScans,
  type ScanRow,
  seedKeys,
} from "./bulk.ts";
import { coldStarts, fourMoreStores } from "./cold-start.ts";
import { type LookRow, lookReport, measureLook, seedLook } from "./look.ts";
import { evictFromPageCache, median, procMemoryMb, timedCommand, timeRuns, writeRandomFile } from "./measure.ts";
import { measureQuery, type QueryRow, queryReport, seedQuery } from "./query.ts";
import { latencyReport, measureQueryLatency } from "./query-latency.ts";
import { measureSelective, type SelectiveRow, seedSelective, selectiveReport } from "./query-selective.ts";
import { measureRemoteLoad } from "./remote-load.ts";
import { type Figures, type ReadFigures, writeReport } from "./report.ts";
import { startServer } from "./server-session.ts";
import { measureStoreCopies, SOURCE_PART_MIB, type StoreCopyRow, seedSource } from "./stores.ts";
import { measureCrowd, measureFailover, measureReplicatedCrowd, teamReport } from "./team-load.ts";
import {
  AWS_CLI,
  measureBudgets,
  measureTransfer,
  type Network,
  rcloneEnv,
  serverEnv,
  type TransferFigures,
} from "./transfers.ts";
import { startWanProxy } from "./wan-proxy.ts";

const root = resolve(import.meta.dir, "../..");
const quick = process.env.BENCH_QUICK === "1";
const onlyBulk = process.env.BENCH_ONLY === "bulk";
const onlyStores = process.env.BENCH_ONLY === "stores";
const onlyTeam = process.env.BENCH_ONLY === "team";
const onlyBudget = process.env.BENCH_ONLY === "budget";
const onlyStart = process.env.BENCH_ONLY === "start";
const onlyLook = process.env.BENCH_ONLY === "look";
const onlyAb = process.env.BENCH_ONLY === "ab";
const work = mkdtempSync(join(tmpdir(), "store-mcp-bench-"));
const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

const binary = join(work, "store-mcp-server");
const floorBinary = join(work, "floor");
const nodeBundle = join(work, "server.mjs");
log("building the server, the floor binary and the Node bundle");
await compile({ outfile: binary });
// Mapped as an installed binary is, not from the pages the build just wrote (measure.ts says why that shifts a peak).
evictFromPageCache(binary);
await build([
  "build",
  "--compile",
  "--minify",
  "--bytecode",
  "--format=esm",
  join(import.meta.dir, "floor-server.ts"),
  "--outfile",
  floorBinary,
]);
// The query engine stays out of the Node bundle (its bindings pick a platform package at run time; the bundle starts, lists and transfers).
await build([
  "build",
  "--target=node",
  "--format=esm",
  "--minify",
  "--external",
  "@duckdb/node-api",
  "--external",
  "bun:sqlite",
  join(root, "src/startup/cli.ts"),
  "--outfile",
  nodeBundle,
]);

log("starting Ceph RGW and the WAN model in front of it");
let s3 = await startCephRgw();
let wan = await startWanProxy(s3.endpoint);
const networksNow = (): Network[] => [
  { name: "loopback", endpoint: s3.endpoint },
  { name: "wan", endpoint: wan.endpoint },
];
/**
 * A fresh Ceph (and WAN model in front of it) for the next phase of a full run: memstore keeps every byte written in
 * RAM, and the transfers' GiBs and the bulk trees together outgrew this machine's 24 GiB (the OSD at 18 GB, the bulk
 * jobs' WAN phase stalled).
 */
async function freshStore(): Promise<Network[]> {
  await wan.stop();
  await s3.stop();
  s3 = await startCephRgw();
  wan = await startWanProxy(s3.endpoint);
  return networksNow();
}
try {
  const networks = networksNow();
  const loopback = networks[0]!;
  if (onlyBulk || onlyStores || onlyTeam || onlyBudget || onlyStart || onlyLook || onlyAb) {
    await (onlyBulk
      ? benchBulk(networks)
      : onlyStores
        ? benchStores(networks)
        : onlyBudget
          ? benchBudget(networks)
          : onlyStart
            ? benchStart(networks)
            : onlyLook
              ? benchLook(networks)
              : onlyAb
                ? benchAb(networks)
                : benchTeam());
    // process.exit skips the finally below: stop Ceph here (it was left running, holding 12 GB, before).
    await wan.stop();
    await s3.stop();
    rmSync(work, { recursive: true, force: true });
    process.exit(0);
  }
  const sdk = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  for (const b of ["bench", "bench-list", "bench-list-1k"]) await sdk.send(new CreateBucketCommand({ Bucket: b }));

  const figures: Figures = { quick, transfers: [], reads: [], wan: wan.model } as unknown as Figures;
  const plainEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...serverEnv(s3, loopback) };

  await measureStart(figures, plainEnv, loopback);

  const dir = join(work, "files");
  mkdirSync(join(dir, "down"), { recursive: true });
  // A fresh Ceph creates its multipart pools on the first large upload: warm it up untimed, both ways.
  writeRandomFile(join(dir, "f64.bin"), 64);
  await measureTransfer({ binary, store: s3, bucket: "bench", dir, runs: 1 }, loopback, "f64.bin", 64);
  const sizes = quick ? [256] : [256, 1024];
  for (const sizeMiB of sizes) writeRandomFile(join(dir, `f${sizeMiB}.bin`), sizeMiB);
  for (const net of networks) {
    for (const sizeMiB of sizes) {
      log(`transfers of ${sizeMiB} MiB, ${net.name}`);
      const setup = { binary, store: s3, bucket: "bench", dir, runs: quick ? 1 : 5 };
      figures.transfers.push(await measureTransfer(setup, net, `f${sizeMiB}.bin`, sizeMiB));
    }
  }

  // The WAN model moves 1 GiB in ~7 s, so a 20 s budget never fires there: 2 s makes every call hand back mid-transfer.
  log("a call budget through the WAN model: 20 s and 2 s against none");
  const budgetSize = quick ? 256 : 1024;
  figures.budget = await measureBudgets(
    { binary, store: s3, bucket: "bench", dir, runs: quick ? 1 : 3 },
    networks[1]!,
    `f${budgetSize}.bin`,
    budgetSize,
    [0, 20, 2],
  );

  log("ranged reads and listings");
  writeRandomFile(join(dir, "f1.bin"), 1);
  await sdk.send(
    new PutObjectCommand({ Bucket: "bench", Key: "one.bin", Body: await Bun.file(join(dir, "f1.bin")).bytes() }),
  );
  await seedListing(sdk);
  for (const net of networks) figures.reads.push(await measureReads(net, dir));

  log("remote mode under load: 100 clients × 20 calls over HTTP, and over stdio");
  figures.remoteLoad = await measureRemoteLoad(binary, serverEnv(s3, loopback), dir, "bench-list-1k", "obj-00001.txt");

  figures.machine = await describeMachine();
  const report = writeReport(figures, join(import.meta.dir, quick ? "results-quick.md" : "results.md"));
  process.stdout.write(report);
  log("a fresh Ceph for each of the next phases");
  await benchBulk(await freshStore());
  await benchStores(await freshStore());
  await benchLook(await freshStore());
  await freshStore();
  await benchTeam();
} finally {
  await wan.stop();
  await s3.stop();
  rmSync(work, { recursive: true, force: true });
}

/** A team's load on one deployment (team-load.ts): 100 × 20 over HTTP against stdio, 1,000 people at once, a replica stopped under load; writes results-team.md. */
async function benchTeam(): Promise<void> {
  const sdk = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  await sdk.send(new CreateBucketCommand({ Bucket: "bench-team" }));
  await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      sdk.send(new PutObjectCommand({ Bucket: "bench-team", Key: `obj-${String(i).padStart(5, "0")}.txt`, Body: "x" })),
    ),
  );
  const env = serverEnv(s3, { name: "loopback", endpoint: s3.endpoint });
  const dir = join(work, "team");
  mkdirSync(dir, { recursive: true });
  log("team: 100 clients × 20 calls over HTTP and over stdio");
  const load = await measureRemoteLoad(binary, env, dir, "bench-team", "obj-00001.txt");
  log("team: 1,000 people at once, 5 calls each");
  const crowd = await measureCrowd(binary, env, "bench-team", "obj-00001.txt");
  log("team: two replicas behind nginx, one stopped under load");
  const failover = await measureFailover(binary, env, "bench-team", "obj-00001.txt");
  log("team: 1,000 people through two replicas, without and with a shared redis-server");
  const replicated = await measureReplicatedCrowd(binary, env, "bench-team", "obj-00001.txt");
  const text = teamReport(load, crowd, failover, replicated, await describeMachine());
  writeFileSync(join(import.meta.dir, "results-team.md"), text);
  process.stdout.write(text);
}

/** This tree against BENCH_AGAINST, shape by shape, alternating (ab.ts); writes results-ab.md. */
async function benchAb(networks: Network[]): Promise<void> {
  const against = process.env.BENCH_AGAINST;
  if (!against) throw new Error("BENCH_ONLY=ab needs BENCH_AGAINST=<a binary's path or a git ref>");
  const other = buildAgainst(against);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  log(`A/B: this tree against ${against}, ${rounds} rounds a shape`);
  // BENCH_AB_NETWORKS=loopback: only these networks (a bisection needs one).
  const only = process.env.BENCH_AB_NETWORKS?.split(",").filter(Boolean);
  const nets = networks.filter((n) => !only || only.includes(n.name));
  const text = abReport(await measureAb(binary, other, s3, nets, work, rounds), against, rounds);
  writeFileSync(
    join(import.meta.dir, "results-ab.md"),
    `# A/B results\n\nMeasured ${new Date().toISOString().slice(0, 10)}.\n${text}`,
  );
  process.stdout.write(text);
}

/** search_objects against download + grep, query_objects against download + DuckDB, on both networks (look.ts, query.ts); writes results-look.md. */
async function benchLook(networks: Network[]): Promise<void> {
  const selective = async () => {
    log("looking inside objects: a selective query over a large Parquet object");
    const size = await seedSelective(s3, join(work, "selective"));
    const rows: SelectiveRow[] = [];
    for (const net of networks) rows.push(await measureSelective(binary, s3, net, join(work, "selective"), size));
    return selectiveReport(rows);
  };
  // BENCH_LOOK_ONLY=selective: that query alone, printed; =query: the group-by over the CSV and its Parquet form alone.
  if (process.env.BENCH_LOOK_ONLY === "selective") {
    process.stdout.write(await selective());
    return;
  }
  if (process.env.BENCH_LOOK_ONLY === "query") {
    const dir = join(work, "look", "query");
    const sizes = await seedQuery(s3, dir);
    const queries: QueryRow[] = [];
    for (const net of networks) queries.push(...(await measureQuery(binary, s3, net, dir, sizes)));
    process.stdout.write(queryReport(queries));
    return;
  }
  log("looking inside objects: search_objects against download + grep");
  const expected = await seedLook(s3);
  const dir = join(work, "look");
  mkdirSync(dir, { recursive: true });
  const rows: LookRow[] = [];
  for (const net of networks) rows.push(await measureLook(binary, s3, net, dir, expected));
  log("looking inside objects: query_objects against download + DuckDB");
  const sizes = await seedQuery(s3, join(dir, "query"));
  const queries: QueryRow[] = [];
  for (const net of networks) queries.push(...(await measureQuery(binary, s3, net, join(dir, "query"), sizes)));
  // BENCH_QUERY_AGAINST=<another build's binary>: its query latency measured alternately with this one's.
  const against = process.env.BENCH_QUERY_AGAINST;
  const latency = await measureQueryLatency(
    [{ name: "this build", binary }, ...(against ? [{ name: against, binary: against }] : [])],
    s3,
    networks[0]!,
    join(dir, "query"),
  );
  const text =
    lookReport(rows, await describeMachine()) + queryReport(queries) + (await selective()) + latencyReport(latency);
  writeFileSync(join(import.meta.dir, "results-look.md"), text);
  process.stdout.write(text);
}

/** Bulk jobs and scans on both networks against aws s3 sync and rclone (bulk.ts); writes results-bulk.md. */
/** Copies between stores (issue #26): from the second Ceph user's store into the first's, against rclone; writes results-stores.md. */
async function benchStores(networks: Network[]): Promise<void> {
  const other = s3.other!;
  const otherSdk = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: other,
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  const sdk = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  await sdk.send(new CreateBucketCommand({ Bucket: "bench-stores-dst" }));
  const bigMiB = quick ? 256 : 1024;
  log(`stores: seeding the second store with ${bigMiB} MiB and 2,000 small objects`);
  await seedSource(otherSdk, "bench-stores-src", bigMiB, 2000);
  const dir = join(work, "stores");
  mkdirSync(dir, { recursive: true });
  const [loopback, wanNet] = networks as [Network, Network];
  const rows: StoreCopyRow[] = [];
  log("copies between stores, loopback");
  rows.push(
    ...(await measureStoreCopies(
      binary,
      s3,
      other,
      loopback,
      loopback,
      "bench-stores-src",
      "bench-stores-dst",
      dir,
      "loopback",
    )),
  );
  log("copies between stores, the source behind the WAN model");
  rows.push(
    ...(await measureStoreCopies(
      binary,
      s3,
      other,
      wanNet,
      loopback,
      "bench-stores-src",
      "bench-stores-dst",
      dir,
      "wan-source",
    )),
  );
  const lines = [
    "# Copies between stores: results",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} on ${await describeMachine()}. From the second Ceph user's store into the first's (the same RGW; \`wan-source\`: the source through the WAN model), ours through the server (copy_object / copy_prefix with source_store) against \`rclone copyto\` / \`rclone copy --transfers 32\` between two remotes. A large object is copied twice by each, taking turns (ours, rclone, rclone, ours): the best time of two, and our higher peak of two; the small objects once each. Above 1.0× we are faster. CPU: ours for the call alone (every thread), rclone's whole process, each from the run with the best time; efficiency is rclone's CPU over ours (target ≥ 1.5×, issue #70).`,
    "",
    "| network | job | ours | peak RSS | rclone | rclone ÷ ours | CPU: ours / rclone | efficiency |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.network} | ${r.job}${r.job === "one large object" ? ` (${bigMiB} MiB, one PutObject)` : r.job === "one large object in parts" ? ` (${bigMiB} MiB, ${bigMiB / SOURCE_PART_MIB} parts of ${SOURCE_PART_MIB} MiB)` : " (2,000)"} | ${(r.oursMs / 1000).toFixed(1)} s | ${Math.round(r.peakMb)} MB | ${(r.rcloneMs / 1000).toFixed(1)} s | ${(r.rcloneMs / r.oursMs).toFixed(2)}× | ${(r.oursCpuMs / 1000).toFixed(2)} / ${(r.rcloneCpuMs / 1000).toFixed(2)} s | ${(r.rcloneCpuMs / r.oursCpuMs).toFixed(2)}× |`,
    ),
    "",
  ];
  const report = lines.join("\n");
  await Bun.write(join(import.meta.dir, quick ? "results-stores-quick.md" : "results-stores.md"), report);
  process.stdout.write(report);
}

async function benchBulk(networks: Network[]): Promise<void> {
  const sdk = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  await sdk.send(new CreateBucketCommand({ Bucket: "bench-bulk" }));
  await sdk.send(new CreateBucketCommand({ Bucket: "bench-scan" }));
  const bulkDir = join(work, "bulk");
  const tree = join(bulkDir, "tree");
  log("bulk: making 2,000 small files and 4 of 64 MiB");
  makeBulkTree(tree, quick ? 16 : 64);
  const rows: BulkRow[] = [];
  for (const net of networks) {
    log(`bulk jobs, ${net.name}`);
    rows.push(...(await measureBulkTransfers(binary, s3, net, "bench-bulk", tree, bulkDir)));
  }
  const keys = quick ? 20_000 : 100_000;
  log(`bulk: seeding ${keys.toLocaleString("en-US")} keys for the scans`);
  await seedKeys(sdk, "bench-scan", keys);
  const scans: ScanRow[] = [];
  for (const net of networks) scans.push(await measureScans(binary, s3, net, "bench-scan", keys, bulkDir));
  const report = bulkReport(rows, scans, await describeMachine());
  await Bun.write(join(import.meta.dir, quick ? "results-bulk-quick.md" : "results-bulk.md"), report);
  process.stdout.write(report);
}

/** Single-request reads and listings through `net`: a 1 MiB read of a big and a small object, one page, all pages; rclone lsf beside them. */
async function measureReads(net: Network, dir: string): Promise<ReadFigures> {
  const server = await startServer(binary, serverEnv(s3, net), dir);
  try {
    const reads = quick ? 5 : 15;
    const readFirstMiB = (key: string) => () =>
      server.call("get_object", { bucket_name: "bench", object_key: key, max_content_size: 1_048_576 }).then(() => {});
    await readFirstMiB("one.bin")();
    const lists = quick ? 3 : 7;
    const rclone = rcloneEnv(s3, net);
    return {
      network: net.name,
      rangedBigMs: median(await timeRuns(reads, readFirstMiB(`ours-${net.name}-256.bin`))),
      rangedSmallMs: median(await timeRuns(reads, readFirstMiB("one.bin"))),
      listPageMs: median(
        await timeRuns(
          lists,
          async () => void (await server.call("list_objects", { bucket_name: "bench-list", max_keys: 1000 })),
        ),
      ),
      listAllMs: median(await timeRuns(lists, () => pageThrough(server.call, "bench-list"))),
      rcloneList1kMs: median(
        await timeRuns(lists, async () => void (await timedCommand(["rclone", "lsf", "bench:bench-list-1k"], rclone))),
      ),
      rcloneList10kMs: median(
        await timeRuns(lists, async () => void (await timedCommand(["rclone", "lsf", "bench:bench-list"], rclone))),
      ),
    };
  } finally {
    await server.close();
  }
}

async function build(args: string[]): Promise<void> {
  await timedCommand([process.execPath, ...args]);
}

/** Incompressible enough for a store that does not compress; each MiB differs. */
/** 10,000 keys in bench-list and 1,000 in bench-list-1k, 32 PUTs at a time. */
async function seedListing(sdk: S3Client): Promise<void> {
  const puts: (() => Promise<unknown>)[] = [];
  for (let i = 0; i < 10_000; i++)
    puts.push(() =>
      sdk.send(new PutObjectCommand({ Bucket: "bench-list", Key: `obj-${String(i).padStart(5, "0")}.txt`, Body: "x" })),
    );
  for (let i = 0; i < 1_000; i++)
    puts.push(() =>
      sdk.send(
        new PutObjectCommand({ Bucket: "bench-list-1k", Key: `obj-${String(i).padStart(5, "0")}.txt`, Body: "x" }),
      ),
    );
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < puts.length) await puts[next++]!();
    }),
  );
}

async function pageThrough(
  call: (name: string, args: Record<string, unknown>) => Promise<{ structuredContent?: Record<string, any> }>,
  bucket: string,
): Promise<void> {
  let token: string | undefined;
  let seen = 0;
  do {
    const page = await call("list_objects", {
      bucket_name: bucket,
      max_keys: 1000,
      ...(token ? { continuation_token: token } : {}),
    });
    seen += page.structuredContent?.objects.length ?? 0;
    token = page.structuredContent?.next_continuation_token ?? undefined;
  } while (token);
  if (seen !== 10_000) throw new Error(`paging saw ${seen} keys, expected 10000`);
}

async function describeMachine(): Promise<string> {
  const cpu = (await Bun.file("/proc/cpuinfo").text()).match(/model name\s*:\s*(.+)/)?.[1] ?? "unknown CPU";
  const memGb = Math.round(Number((await Bun.file("/proc/meminfo").text()).match(/MemTotal:\s+(\d+)/)?.[1]) / 2 ** 20);
  const os = (await Bun.file("/etc/os-release").text()).match(/PRETTY_NAME="(.+)"/)?.[1] ?? process.platform;
  // The reference CLIs are installed by `provision.sh bench`; a partial run (BENCH_ONLY) may go without them.
  const versionOf = (cmd: string[]) =>
    Bun.which(cmd[0]!) ? Bun.spawnSync(cmd).stdout.toString() : `${cmd[0]} not installed`;
  const rclone = versionOf(["rclone", "version"]).split("\n")[0];
  const node = versionOf(["node", "--version"]).trim();
  const ceph = versionOf(["ceph", "--version"]).match(/version ([\d.]+)/)?.[1];
  const aws = versionOf([AWS_CLI, "--version"]).trim().split(" ")[0];
  return `${os}, ${navigator.hardwareConcurrency} × ${cpu}, ${memGb} GiB RAM; bun ${Bun.version}, node ${node}, ${rclone}, ${aws}, Ceph RGW ${ceph} (memstore)`;
}

export type { TransferFigures };

/** Only the call budget's figures (BENCH_ONLY=budget): the rows the full report has for it, printed. */
async function benchBudget(networks: Network[]): Promise<void> {
  const sdk = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  await sdk.send(new CreateBucketCommand({ Bucket: "bench" }));
  const dir = join(work, "files");
  mkdirSync(join(dir, "down"), { recursive: true });
  const size = quick ? 256 : 1024;
  writeRandomFile(join(dir, `f${size}.bin`), size);
  log(`a call budget through the WAN model: ${size} MiB, 20 s and 2 s against none`);
  const budget = await measureBudgets(
    { binary, store: s3, bucket: "bench", dir, runs: quick ? 1 : 3 },
    networks[1]!,
    `f${size}.bin`,
    size,
    [0, 20, 2],
  );
  process.stdout.write(`${JSON.stringify(budget, null, 1)}\n`);
}

/** Start-up, --version, idle memory and the tools/list sizes, into `figures` (BENCH_ONLY=start prints just these). */
async function measureStart(figures: Figures, plainEnv: Record<string, string>, loopback: Network): Promise<void> {
  log("cold start");
  const starts = quick ? 7 : 21;
  const [ours, floor] = await coldStarts([[binary], [floorBinary]], plainEnv, starts);
  figures.coldStartMs = ours!;
  figures.floorColdStartMs = floor!;
  figures.nodeColdStartMs = (await coldStarts([["node", nodeBundle]], plainEnv, quick ? 3 : 9))[0]!;
  // A 2026-07-28 client's start (server/discover, then tools/list): the SDK answers it, loaded first.
  figures.coldStartModernMs = (await coldStarts([[binary]], plainEnv, starts, true))[0]!;
  // One store against five (the default plus four of the environment form), both started through env(1).
  const [oneStore, fiveStores] = await coldStarts(
    [
      ["env", binary],
      ["env", ...fourMoreStores(s3.endpoint), binary],
    ],
    plainEnv,
    starts,
  );
  figures.coldStartOneStoreMs = oneStore!;
  figures.coldStartFiveStoresMs = fiveStores!;
  figures.binaryMb = statSync(binary).size / 2 ** 20;
  figures.floorBinaryMb = statSync(floorBinary).size / 2 ** 20;
  // The reference CLIs' own start-up, shown beside their transfer times (which include it).
  // (Not for BENCH_ONLY=start, which needs no reference CLI installed.)
  if (!onlyStart)
    figures.rcloneStartMs = median(await timeRuns(5, async () => void (await timedCommand(["rclone", "version"]))));
  // `--version` is answered before the CLI's modules load (src/main.ts): beside a compiled program that prints a line.
  figures.versionMs = median(
    await timeRuns(quick ? 5 : 15, async () => void (await timedCommand([binary, "--version"]))),
  );
  figures.floorVersionMs = median(
    await timeRuns(quick ? 5 : 15, async () => void (await timedCommand([floorBinary, "--version"]))),
  );
  if (!onlyStart)
    figures.awsStartMs = median(await timeRuns(5, async () => void (await timedCommand([AWS_CLI, "--version"]))));

  log("idle memory, tools/list size");
  const idle = await startServer(binary, serverEnv(s3, loopback), work, ["--allow-delete", "--allow-admin"]);
  figures.toolsListBytes = idle.toolsListBytes;
  figures.idleRssMb = procMemoryMb(idle.pid, "VmRSS");
  await idle.call("list_buckets");
  figures.afterFirstCallRssMb = procMemoryMb(idle.pid, "VmRSS");
  await idle.close();
  const plain = await startServer(binary, serverEnv(s3, loopback), work, []);
  figures.toolsListDefaultBytes = plain.toolsListBytes;
  await plain.close();
}

/** Only the start-up figures (BENCH_ONLY=start), printed. */
async function benchStart(networks: Network[]): Promise<void> {
  const figures = {} as Figures;
  await measureStart(
    figures,
    { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...serverEnv(s3, networks[0]!) },
    networks[0]!,
  );
  process.stdout.write(`${JSON.stringify(figures, null, 1)}\n`);
}
