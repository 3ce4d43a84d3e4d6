/** Drives the binary with raw JSON-RPC lines, to see exactly what reaches stdout and stderr. */

import { requireBinary } from "./mcp.ts";
import { tracked } from "./processes.ts";

export interface RawRun {
  stdoutLines: string[];
  stderr: string;
  exitCode: number | null;
}

export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-test", version: "1" } },
};
export const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };

/**
 * Sends `messages` one per line (a string goes out as it is, for malformed input), waits until every request (a message with an
 * id) is answered, then closes stdin and waits for the process to exit.
 */
export async function rawSession(
  args: string[],
  env: Record<string, string>,
  messages: (object | string)[],
  timeoutMs = 30_000,
): Promise<RawRun> {
  const proc = Bun.spawn([requireBinary(), ...args], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...env },
  });
  tracked(proc);
  const expected = new Set(
    messages.filter((m) => typeof m === "object" && "id" in m).map((m) => (m as { id: unknown }).id),
  );
  const lines: string[] = [];
  const stderrText = new Response(proc.stderr).text();
  const reader = (async () => {
    let buffer = "";
    for await (const chunk of proc.stdout) {
      buffer += new TextDecoder().decode(chunk);
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        lines.push(line);
        try {
          const id = JSON.parse(line).id;
          expected.delete(id);
        } catch {
          // not JSON: the test will see it in stdoutLines
        }
        if (expected.size === 0) proc.stdin.end();
      }
    }
    if (buffer) lines.push(buffer);
  })();
  for (const m of messages) proc.stdin.write(`${typeof m === "string" ? m : JSON.stringify(m)}\n`);
  if (expected.size === 0) proc.stdin.end();
  const timer = setTimeout(() => proc.kill(), timeoutMs);
  const exitCode = await proc.exited;
  clearTimeout(timer);
  await reader;
  return { stdoutLines: lines, stderr: await stderrText, exitCode };
}

/** Runs the binary with arguments and no stdin traffic (for --help, --version, config errors). */
export function runBinary(
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): { stdout: string; stderr: string; exitCode: number | null } {
  const out = Bun.spawnSync([requireBinary(), ...args], {
    stdin: "ignore",
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...env },
    timeout: 15_000,
  });
  return { stdout: out.stdout.toString(), stderr: out.stderr.toString(), exitCode: out.exitCode };
}
