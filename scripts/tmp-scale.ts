import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdirSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
const env = { STORE_ENDPOINT_URL: "http://127.0.0.1:18080", STORE_ACCESS_KEY_ID: "TESTACCESSKEY0000001", STORE_SECRET_ACCESS_KEY: "testsecretkey000000000000000000000000001", STORE_REGION: "us-east-1", PATH: process.env.PATH!, ...(process.env.EXTRA ? JSON.parse(process.env.EXTRA) : {}) };
const dir = process.env.DIR ?? "/tmp/exp/data";
if (!existsSync(join(dir, "src"))) for (let d = 0; d < 200; d++) { mkdirSync(join(dir, "src", `d${d}`), { recursive: true }); for (let f = 0; f < 100; f++) writeFileSync(join(dir, "src", `d${d}`, `f${f}.txt`), `object ${d}/${f}\n`); }
const t = new StdioClientTransport({ command: process.env.PROF ? "bun" : "/work/main/dist/store-mcp-server", args: process.env.PROF ? ["--cpu-prof-md", "--cpu-prof-dir=/tmp/exp/prof", "/work/main/src/cli.ts", "--allowed-dir", dir] : ["--allowed-dir", dir], cwd: "/work/main", env, stderr: "inherit" });
const c = new Client({ name: "x", version: "1" }); await c.connect(t);
const pid = t.pid!;
const rss = (k: string) => Number(readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith(k))!.replace(/\D/g, "")) / 1000;
const cpu = () => { const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" "); return (Number(f[11]) + Number(f[12])) / 100; };
const bucket = process.argv[2] ?? "scale";
await c.callTool({ name: "create_bucket", arguments: { bucket_name: bucket } });
console.log("start", rss("VmRSS:"), rss("VmHWM:"));
for (const [name, args] of JSON.parse(process.argv[3] ?? "[]")) {
  const s = performance.now();
  const r: any = await c.callTool({ name, arguments: { bucket_name: bucket, ...args } }, undefined, { timeout: 600000 });
  const c0 = 0; console.log(name, ((performance.now() - s) / 1000).toFixed(1), "s", "cpu", cpu(), "rss", rss("VmRSS:"), "hwm", rss("VmHWM:"), JSON.stringify(r.structuredContent?.counts ?? r.structuredContent?.objects ?? r.content?.[0]?.text?.slice(0, 200)));
}
await c.close();
