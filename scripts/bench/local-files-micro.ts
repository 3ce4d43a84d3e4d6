/**
 * The local side of a bulk download alone, without a store: for 2,000 files of
 * 4-64 KiB in 20 folders, what download_prefix asks of src/local/ per file
 * (the plan's look at the target, then the atomic write: temp file, pieces,
 * mtime, link into place), run in the same process N times, with this
 * process's CPU per file. Stable where the whole bench is not (no store on
 * the same cores): the figure to judge a change to the sandbox's per-file path.
 *   bun scripts/bench/local-files-micro.ts [dir] [rounds]
 */
import { mkdirSync, rmSync } from "node:fs";
import { createLocalFiles } from "../../src/local/index.ts";

const dir = process.argv[2] ?? "/tmp/local-files-micro";
const rounds = Number(process.argv[3] ?? 5);
const FILES = 2000;
const files = createLocalFiles(async () => ({ dirs: [dir] })).forStoreKeys();
const body = new Uint8Array(64 * 1024);
crypto.getRandomValues(body);
const sizes = Array.from({ length: FILES }, (_, i) => 4096 + ((i * 7919) % 60) * 1024);

async function once(round: number): Promise<number> {
  const root = `${dir}/r${round}`;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const started = process.cpuUsage();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < FILES; i = next++) {
      const given = `${root}/d${i % 20}/f${i}.bin`;
      const state = await files.withFile(given, async (local) => (local ? "there" : "absent"));
      if (state !== "absent") throw new Error(`${given} is there already`);
      const bytes = body.subarray(0, sizes[i]);
      await files.writeDownload(
        { given, path: given },
        { size: bytes.length, fill: (write) => write(0, [bytes.slice()]) },
        { overwrite: false, sha256: false, mtime: new Date(1_700_000_000_000) },
      );
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000 / FILES;
}

const perFile: number[] = [];
for (let r = 0; r < rounds; r++) perFile.push(await once(r));
rmSync(dir, { recursive: true, force: true });
perFile.sort((a, b) => a - b);
console.log(
  `local side of a bulk download: ${perFile.map((v) => v.toFixed(3)).join(" ")} ms of CPU a file (median ${perFile[Math.floor(rounds / 2)]!.toFixed(3)})`,
);
