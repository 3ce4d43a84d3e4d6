/** Cold start: spawn → initialize answered → tools/list answered, then stdin closed. */
import { median } from "./measure.ts";

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };
const LIST = { jsonrpc: "2.0", id: 2, method: "tools/list" };

/** A 2026-07-28 client's opening: server/discover, then tools/list, each naming the protocol in its _meta. */
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const MODERN = [
  { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: ENVELOPE } },
  { jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: ENVELOPE } },
];

/** One start: ms from spawn until the tools/list answer is read; `modern`: a 2026-07-28 opening instead of initialize. */
export async function coldStartOnce(cmd: string[], env: Record<string, string>, modern = false): Promise<number> {
  const started = performance.now();
  const proc = Bun.spawn(cmd, { stdin: "pipe", stdout: "pipe", stderr: "ignore", env });
  proc.stdin.write(`${(modern ? MODERN : [INIT, INITIALIZED, LIST]).map((m) => JSON.stringify(m)).join("\n")}\n`);
  proc.stdin.flush();
  let seen = "";
  for await (const chunk of proc.stdout) {
    seen += new TextDecoder().decode(chunk);
    if (seen.includes('"id":2')) break;
  }
  const took = performance.now() - started;
  if (!seen.includes('"tools"')) throw new Error(`${cmd.join(" ")} did not answer tools/list: ${seen.slice(0, 300)}`);
  proc.stdin.end();
  await proc.exited;
  return took;
}

/**
 * The median of `runs` starts of each command, after one warm-up start each
 * (page cache). The commands take turns, so a busy moment on this shared
 * machine falls on all of them alike.
 */
export async function coldStarts(
  cmds: string[][],
  env: Record<string, string>,
  runs: number,
  modern = false,
): Promise<number[]> {
  for (const cmd of cmds) await coldStartOnce(cmd, env, modern);
  const times: number[][] = cmds.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (const [k, cmd] of cmds.entries()) times[k]!.push(await coldStartOnce(cmd, env, modern));
  }
  return times.map(median);
}

/** `env` arguments for four more stores of the environment form (issue #26: clients are built on first use, so they should cost nothing at start). */
export function fourMoreStores(endpoint: string): string[] {
  const names = ["s1", "s2", "s3", "s4"];
  return [
    `STORE_STORES=${names.join(",")}`,
    ...names.flatMap((n) => [
      `STORE_${n.toUpperCase()}_ENDPOINT_URL=${endpoint}`,
      `STORE_${n.toUpperCase()}_ACCESS_KEY_ID=KEY${n}`,
      `STORE_${n.toUpperCase()}_SECRET_ACCESS_KEY=secret${n}`,
    ]),
  ];
}
