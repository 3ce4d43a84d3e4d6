/**
 * The query bench's CPU (scripts/bench/query.ts) is a server's and its query worker's: treeCpuMs must count a
 * living child's CPU, and keep counting it once the child has ended and been reaped (then in the parent's cutime).
 */
import { expect, test } from "bun:test";
import { treeCpuMs } from "../../../scripts/bench/measure.ts";

const BURN_MS = 400;

test("a child's CPU is counted while it lives and after it is reaped", async () => {
  const before = treeCpuMs(process.pid);
  // Burns ~BURN_MS of CPU, then says so and waits to be told to end.
  const child = Bun.spawn(
    [
      process.execPath,
      "-e",
      `const end = Date.now() + ${BURN_MS}; while (Date.now() < end); console.log("burnt"); await Bun.stdin.text();`,
    ],
    { stdin: "pipe", stdout: "pipe" },
  );
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toContain("burnt");
  const living = treeCpuMs(process.pid) - before;
  child.stdin.end();
  await child.exited;
  const reaped = treeCpuMs(process.pid) - before;
  // The clock's ticks are 10 ms, and the child's start-up adds its own CPU.
  expect(living).toBeGreaterThanOrEqual(BURN_MS * 0.8);
  expect(reaped).toBeGreaterThanOrEqual(living);
});
