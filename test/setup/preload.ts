/**
 * Runs once before the test files: starts a throwaway Ceph RGW (the real S3
 * implementation every storage behaviour is checked against) and stops it at
 * the end. If it cannot start, every test that needs it fails, saying how to
 * provision it; nothing is skipped. A run of unit files only (every path on
 * the command line under test/unit/) starts none: unit tests reach no store,
 * and one then runs in well under a second. Under scripts/test.ts (the
 * README's test command) every file shares the one store the runner started
 * (STORE_TEST_S3), or fails with the reason it could not (STORE_TEST_S3_ERROR).
 */

import { afterAll } from "bun:test";
import { readFileSync } from "node:fs";
import { type S3Server, startCephRgw } from "../../scripts/s3/local-servers.ts";
import { removeTempDirs } from "../helpers/files.ts";
import { killLeftovers } from "../helpers/processes.ts";
import { setS3Server } from "../helpers/s3.ts";

/** Whether this run names only unit test files or folders (read from the command line; elsewhere than Linux: no). */
function unitFilesOnly(): boolean {
  let args: string[];
  try {
    args = readFileSync("/proc/self/cmdline", "utf8").split("\0").filter(Boolean);
  } catch {
    return false;
  }
  const at = args.indexOf("test");
  if (at < 0) return false;
  const paths = args
    .slice(at + 1)
    .filter(
      (a, i, all) =>
        !a.startsWith("-") &&
        !(
          all[i - 1]?.startsWith("--") &&
          !all[i - 1]!.includes("=") &&
          /^--(timeout|preload|test-name-pattern|rerun-each|bail|seed)$/.test(all[i - 1]!)
        ),
    );
  return paths.length > 0 && paths.every((p) => /(^|\/)test\/unit(\/|$)/.test(p));
}

let server: S3Server | undefined;
const shared = process.env.STORE_TEST_S3;
if (shared) {
  // scripts/test.ts started one store for every file of the run, and stops it.
  setS3Server({ ...(JSON.parse(shared) as Omit<S3Server, "stop">), stop: async () => {} });
} else if (process.env.STORE_TEST_S3_ERROR) {
  setS3Server(undefined, process.env.STORE_TEST_S3_ERROR);
} else if (unitFilesOnly()) {
  setS3Server(undefined, "this run names only unit tests (test/unit/), so no S3 server was started");
} else {
  try {
    server = await startCephRgw();
    setS3Server(server);
  } catch (err) {
    setS3Server(undefined, (err as Error).message);
  }
}

afterAll(async () => {
  // A test that failed or timed out left its servers: none outlives the file (test/helpers/processes.ts).
  killLeftovers();
  await server?.stop();
  removeTempDirs();
});
