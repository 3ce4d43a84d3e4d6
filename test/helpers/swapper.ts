/**
 * A real concurrent attacker for the sandbox: a python3 process that swaps a
 * directory and a symlink to outside with renameat2(RENAME_EXCHANGE) in a tight
 * loop, so at any instant either name may be either thing. It stops by itself
 * after `maxSeconds` and reports how many swaps it made.
 */
import { tracked } from "./processes.ts";

const SCRIPT = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b, limit = sys.argv[1].encode(), sys.argv[2].encode(), time.time() + float(sys.argv[3])
n = 0
print("ready", flush=True)
while time.time() < limit:
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
    n += 1
    if n % 2 == 0 and os.path.exists(sys.argv[4]):
        break
print(n, flush=True)
`;

export interface Swapper {
  /** Stops the loop (leaving both names as they were at the start) and returns the number of swaps. */
  stop(): Promise<number>;
}

export async function startSwapper(a: string, b: string, maxSeconds = 120): Promise<Swapper> {
  const stopFile = `${a}.stop-${process.pid}`;
  const proc = Bun.spawn(["python3", "-c", SCRIPT, a, b, String(maxSeconds), stopFile], {
    stdout: "pipe",
    stderr: "pipe",
  });
  tracked(proc);
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`swapper did not start: ${await new Response(proc.stderr).text()}`);
    text += new TextDecoder().decode(value);
  }
  return {
    async stop() {
      await Bun.write(stopFile, "");
      const code = await proc.exited;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      await Bun.file(stopFile).delete();
      if (code !== 0) throw new Error(`swapper failed: ${await new Response(proc.stderr).text()}`);
      return Number(text.replace("ready", "").trim());
    },
  };
}
