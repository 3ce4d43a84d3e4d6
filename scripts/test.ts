/**
 * The README's test command, after provisioning: checks the formatting and
 * lints (`biome ci`), type-checks (`tsc --noEmit`, the view's too) while it
 * builds the binary, starts one Ceph RGW for the whole run and
 * runs every test file in parallel workers that share it.
 *
 * Each end-to-end file runs in a `bun test` process of its own, and the unit
 * and tool tests one process a folder; test/setup/preload.ts finds the shared
 * store in STORE_TEST_S3 and starts none. TEST_WORKERS workers (default 3:
 * more only crowd two cores) take the jobs from one queue, longest first (the
 * last run's durations on this machine, else test/durations.json). The files
 * in SOLO_GROUPS time things a loaded machine would skew: they run after the
 * queue, a group at a time, with nothing else beside them. Each job's output is printed whole
 * when it ends; a file that failed is run again alone once (what passes alone
 * failed by the machine's load, and the summary says so); the summary at the
 * end names each failed file with the command that reruns it, and says how
 * many tests passed and failed, in bun's words (.ci/run reads them).
 *
 * What the tests need that takes a while comes up beside other work: the
 * store starts while the formatting is checked and the binary built, and the
 * Python frameworks' venvs (left by `PROVISION_LATER=pyfw`) are built while
 * the first tests run; the one file that uses them waits for them.
 *
 * `bun scripts/test.ts <paths…>` runs just those files or folders the same way.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { type S3Server, startCephRgw } from "./s3/local-servers.ts";

const ROOT = resolve(import.meta.dir, "..");
const WORKERS = Math.max(1, Number(process.env.TEST_WORKERS) || 3);
/**
 * Run after the parallel queue, one group at a time with nothing else beside it. query-isolation holds a small call to
 * a time limit while other calls load the server; stores-copies checks what the server does with a store it judged
 * near or far by how fast it answers, and two busy cores make a near store answer like a far one; shared-limits needs
 * Redis to answer within the 250 ms after which a replica counts alone (by design); copy-nearness judges a store near
 * by a HEAD answered within 12 ms. A loaded machine would fail them for reasons of their own. shared-limits mostly
 * waits (about a sixth of a core): beside stores-copies (about one core) each leaves the other a core.
 */
const SOLO_GROUPS = [["query-isolation"], ["stores-copies", "shared-limits"], ["copy-nearness"]].map((group) =>
  group.map((name) => `test/e2e/${name}.test.ts`),
);
const SOLO = new Set(SOLO_GROUPS.flat());
/**
 * Files that each take both cores for a while (the release's compile and packing, the query engine's two threads):
 * beside one another both took twice as long in some runs, so a worker takes another file while one of these runs.
 */
const APART = new Set(["release", "query-objects"].map((name) => `test/e2e/${name}.test.ts`));
/** Files that need something built first, and the `provision.sh` section that builds it (idempotent: quick once built). */
const NEEDS: Record<string, string> = { "test/e2e/python-frameworks.test.ts": "pyfw" };
const SEED_DURATIONS = join(ROOT, "test/durations.json");
const LAST_DURATIONS = join(ROOT, ".tmp/test-durations.json");

function testFiles(paths: string[]): string[] {
  const walk = (path: string): string[] =>
    statSync(path).isDirectory()
      ? readdirSync(path).flatMap((name) => (name === "node_modules" ? [] : walk(join(path, name))))
      : path.endsWith(".test.ts")
        ? [relative(ROOT, path)]
        : [];
  return [...new Set(paths.flatMap((p) => walk(resolve(ROOT, p))))].sort();
}

/** Seconds per job: the last run's here, over the committed seed. */
function durations(): Record<string, number> {
  const read = (file: string) =>
    existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, number>) : {};
  return { ...read(SEED_DURATIONS), ...read(LAST_DURATIONS) };
}

/** What one `bun test` process runs: a file, or every file of a folder that starts no servers of its own. */
interface Job {
  name: string;
  files: string[];
}

/** Unit and in-memory tool tests run together, one process a folder: each file takes well under a second. */
const GROUPED = ["test/unit/", "test/tools/"];

function jobsOf(files: string[]): Job[] {
  const grouped = GROUPED.map((dir) => ({ name: dir.slice(0, -1), files: files.filter((f) => f.startsWith(dir)) }));
  const alone = files.filter((f) => !GROUPED.some((dir) => f.startsWith(dir))).map((f) => ({ name: f, files: [f] }));
  return [...grouped.filter((g) => g.files.length > 0), ...alone];
}

interface FileRun {
  file: string;
  /** Seconds of CPU the process and its children used (TEST_CPU=1 only). */
  cpu?: number;
  code: number;
  seconds: number;
  pass: number;
  fail: number;
  output: string;
}

function runJob(job: Job, env: Record<string, string | undefined>): Promise<FileRun> {
  const started = performance.now();
  const command = [process.execPath, "test", "--timeout", "60000", ...job.files];
  // TEST_CPU=1: each process's CPU time, children included, to find what loads the machine.
  if (process.env.TEST_CPU) command.unshift("/usr/bin/time", "-f", "__cpu %U %S");
  return new Promise((done) => {
    const child = spawn(command[0]!, command.slice(1), {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("close", (code, signal) => {
      const count = (word: string) => Number(output.match(new RegExp(`^\\s*(\\d+) ${word}$`, "m"))?.[1] ?? 0);
      const failed = code !== 0 ? Math.max(count("fail"), 1) : count("fail");
      if (signal) output += `\n${job.name}: ended by ${signal}\n`;
      const cpu = output.match(/^__cpu ([0-9.]+) ([0-9.]+)$/m);
      done({
        file: job.name,
        cpu: cpu ? Number(cpu[1]) + Number(cpu[2]) : undefined,
        code: code ?? 1,
        seconds: (performance.now() - started) / 1000,
        pass: count("pass"),
        fail: failed,
        output,
      });
    });
  });
}

/** A provisioning section run in the background: its output when it failed, else nothing. */
function provision(section: string): Promise<string | undefined> {
  return new Promise((done) => {
    const child = spawn("bash", ["scripts/provision.sh", section], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("close", (code) => done(code === 0 ? undefined : `provision.sh ${section} failed (${code}):\n${output}`));
  });
}

async function runAll(
  files: string[],
  env: Record<string, string | undefined>,
  needs: Map<string, Promise<string | undefined>>,
): Promise<FileRun[]> {
  const known = durations();
  const jobs = jobsOf(files);
  const ready = new Set(jobs.filter((j) => !needs.has(j.name)).map((j) => j.name));
  for (const [name, built] of needs) void built.then(() => ready.add(name));
  const queue = jobs.filter((j) => !SOLO.has(j.name)).sort((a, b) => (known[b.name] ?? 30) - (known[a.name] ?? 30));
  const runs: FileRun[] = [];
  const report = (run: FileRun) => {
    process.stdout.write(
      `\n${run.output.trimEnd()}\n── ${run.file}: ${run.pass} pass, ${run.fail} fail, ${run.seconds.toFixed(1)} s${run.cpu === undefined ? "" : `, ${run.cpu.toFixed(1)} s CPU`}\n`,
    );
    runs.push(run);
  };
  const running = new Set<string>();
  const clashes = (job: Job) => APART.has(job.name) && [...running].some((name) => APART.has(name));
  // The longest job whose needs are built (and that is not kept apart from one running); when none is, the first to be ready.
  const next = async (): Promise<Job | undefined> => {
    let i = queue.findIndex((j) => ready.has(j.name) && !clashes(j));
    if (i < 0) i = queue.findIndex((j) => ready.has(j.name));
    if (i >= 0) {
      const job = queue.splice(i, 1)[0]!;
      running.add(job.name);
      return job;
    }
    const waiting = queue.shift();
    if (waiting) await needs.get(waiting.name);
    return waiting;
  };
  const run = async (job: Job) => {
    const failed = await needs.get(job.name);
    return failed
      ? { file: job.name, code: 1, seconds: 0, pass: 0, fail: 1, output: `(fail) ${job.name}: ${failed}` }
      : runJob(job, env);
  };
  const worker = async () => {
    for (let job = await next(); job; job = await next()) {
      const done = await run(job);
      running.delete(job.name);
      report(done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(WORKERS, queue.length) }, worker));
  for (const group of SOLO_GROUPS) {
    const mine = jobs.filter((j) => group.includes(j.name));
    for (const done of await Promise.all(mine.map(run))) report(done);
  }
  return runs;
}

/** A step every test needs (the formatting check, the build): its failure ends the run. */
function step(what: string, command: string[]): Promise<string | undefined> {
  return new Promise((done) => {
    const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, stdio: "inherit" });
    child.on("close", (code) => done(code === 0 ? undefined : `${what} failed (${command.join(" ")})`));
  });
}

const named = process.argv.slice(2);
const files = testFiles(named.length ? named : ["test"]);
const started = performance.now();
let store: S3Server | undefined;
const env: Record<string, string | undefined> = { ...process.env };
// Interrupted (Ctrl-C, a CI timeout): the store goes with the run.
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => void store?.stop().finally(() => process.exit(130)));
const storeUp = files.some((f) => !f.startsWith("test/unit/"))
  ? startCephRgw().then(
      (s) => {
        store = s;
        const { stop: _, ...shared } = s;
        env.STORE_TEST_S3 = JSON.stringify(shared);
      },
      // Each file then fails saying why, as a run without the runner does.
      (err: Error) => void (env.STORE_TEST_S3_ERROR = err.message),
    )
  : undefined;
const needs = new Map(
  jobsOf(files)
    .filter((j) => NEEDS[j.name])
    .map((j) => [j.name, provision(NEEDS[j.name]!)] as const),
);
const tsc = join(ROOT, "node_modules/.bin/tsc");
// The type check runs beside the build (`bun build` compiles type errors without a word: only tsc holds the types).
const failedStep = named.length
  ? undefined
  : ((await step("the formatting and lint check", [join(ROOT, "node_modules/.bin/biome"), "ci"])) ??
    (
      await Promise.all([
        step("the type check", [tsc, "--noEmit"]).then(
          async (failed) => failed ?? (await step("the view's type check", [tsc, "--noEmit", "-p", "view"])),
        ),
        step("the build", [process.execPath, "scripts/build-local.ts"]),
      ])
    ).find(Boolean));
await storeUp;
if (failedStep) {
  process.stderr.write(`${failedStep}\n`);
  await store?.stop();
  process.exit(1);
}
let runs: FileRun[] = [];
let reruns: FileRun[] = [];
try {
  runs = await runAll(files, env, needs);
  reruns = await rerunAlone(runs.filter((r) => r.code !== 0));
} finally {
  await store?.stop();
}
mkdirSync(join(ROOT, ".tmp"), { recursive: true });
writeFileSync(
  LAST_DURATIONS,
  JSON.stringify({ ...durations(), ...Object.fromEntries(runs.map((r) => [r.file, Math.round(r.seconds)])) }, null, 1),
);
// A file that failed beside others and passed alone counts as its run alone says (timing under load, said below).
const final = runs.map((r) => reruns.find((again) => again.file === r.file) ?? r);
const failedFiles = final.filter((r) => r.code !== 0);
const pass = final.reduce((n, r) => n + r.pass, 0);
const fail = final.reduce((n, r) => n + r.fail, 0);
process.stdout.write(
  `\n${files.length} files in ${((performance.now() - started) / 1000).toFixed(0)} s, ${WORKERS} workers\n`,
);
for (const again of reruns.filter((r) => r.code === 0))
  process.stdout.write(`passed when rerun alone (it failed beside the others: timing under load): ${again.file}\n`);
for (const run of failedFiles)
  process.stdout.write(
    `failed: ${run.file}\n${run.output
      .split("\n")
      .filter((l) => l.startsWith("(fail)"))
      .join("\n")}\n`,
  );
if (failedFiles.length)
  process.stdout.write(`rerun them alone: bun scripts/test.ts ${failedFiles.map((r) => r.file).join(" ")}\n`);
process.stdout.write(` ${pass} pass\n ${fail} fail\n`);
process.exit(failedFiles.length ? 1 : 0);

/**
 * Files that failed in the parallel queue, run again one at a time with nothing beside them (TEST_RERUN=0: not), as a
 * newcomer would rerun them: what fails alone too is a failure; what passes alone failed by the machine's load, and
 * the summary says which. The unit and tool folders are not rerun (no timing in them).
 */
async function rerunAlone(failed: FileRun[]): Promise<FileRun[]> {
  if (process.env.TEST_RERUN === "0" || named.length > 0) return [];
  const out: FileRun[] = [];
  for (const run of failed.filter((r) => r.file.startsWith("test/e2e/"))) {
    process.stdout.write(`\nrerunning alone: ${run.file}\n`);
    const again = await runJob({ name: run.file, files: [run.file] }, env);
    process.stdout.write(
      `${again.output.trimEnd()}\n── ${again.file} (alone): ${again.pass} pass, ${again.fail} fail\n`,
    );
    out.push(again);
  }
  return out;
}
