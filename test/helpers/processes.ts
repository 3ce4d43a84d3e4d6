/**
 * Every process a test starts, registered when it is spawned, so that none
 * outlives its file whether the test passed, failed or timed out: the
 * preload's afterAll (test/setup/preload.ts) kills what is still running at
 * the file's end, and so does the exit of the test process itself.
 */
const running = new Set<number>();

/** Registers a spawned process by pid (it is forgotten once it exits, when `exited` is given). */
export function tracked<T extends { pid: number; exited?: Promise<unknown> }>(proc: T): T {
  running.add(proc.pid);
  void proc.exited?.then(() => running.delete(proc.pid));
  return proc;
}

/** Registers a pid started by a library (the SDK's stdio transport). */
export function trackPid(pid: number | undefined): void {
  if (pid) running.add(pid);
}

/** Kills (SIGKILL) every registered process still running; returns how many there were. */
export function killLeftovers(): number {
  let killed = 0;
  for (const pid of running) {
    try {
      process.kill(pid, "SIGKILL");
      killed++;
    } catch {
      // Already gone.
    }
  }
  running.clear();
  return killed;
}

process.on("exit", () => void killLeftovers());
