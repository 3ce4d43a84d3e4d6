/** Scratch: profile the HTTP server (from source) under 100 clients × 20 calls. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { freePort, startCephRgw } from "../s3/local-servers.ts";

const s3 = await startCephRgw();
const sdk = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
await sdk.send(new CreateBucketCommand({ Bucket: "prof" }));
for (let i = 0; i < 20; i++) await sdk.send(new PutObjectCommand({ Bucket: "prof", Key: `k${i}`, Body: "x" }));
const port = freePort();
const TOKEN = "bench-token-0123456789abcdef";
const env = { PATH: process.env.PATH ?? "", STORE_ENDPOINT_URL: s3.endpoint, STORE_ACCESS_KEY_ID: s3.accessKeyId, STORE_SECRET_ACCESS_KEY: s3.secretAccessKey, STORE_REGION: s3.region, STORE_HTTP_TOKENS: `bench:${TOKEN}`, STORE_CALLER_RATE: "off", STORE_CALLER_IN_FLIGHT: "off", RUST_LOG: "error" };
const prof = process.env.PROF === "1";
const cmd = process.env.BIN ? [process.env.BIN] : ["bun", ...(prof ? ["--cpu-prof-md", "--cpu-prof-dir", "/tmp/prof"] : []), "src/cli.ts"];
const proc = Bun.spawn([...cmd, "--transport", "http", "--listen", `127.0.0.1:${port}`], { env, stdout: "ignore", stderr: "inherit" });
const url = new URL(`http://127.0.0.1:${port}/mcp`);
while (!(await fetch(new URL("/healthz", url)).then((r) => r.ok, () => false))) await Bun.sleep(20);
const cpu = () => { const f = require("node:fs").readFileSync(`/proc/${proc.pid}/stat`, "utf8").split(") ")[1].split(" "); return (Number(f[11]) + Number(f[12])) * 10; };
for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
  const clients = await Promise.all(Array.from({ length: 100 }, async () => { const c = new Client({ name: "p", version: "1" }); await c.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } })); return c; }));
  const c0 = cpu(); const t0 = performance.now();
  await Promise.all(clients.map(async (c, i) => { for (let k = 0; k < 20; k++) await c.callTool({ name: k % 2 ? "head_object" : "list_objects", arguments: k % 2 ? { bucket_name: "prof", object_key: `k${i % 20}` } : { bucket_name: "prof", max_keys: 20 } }); }));
  const ms = performance.now() - t0;
  console.log(`round ${round}: ${(2000 / ms * 1000).toFixed(0)} calls/s, server cpu ${((cpu() - c0) / 2000).toFixed(2)} ms/call`);
  await Promise.all(clients.map((c) => c.close()));
}
proc.kill("SIGTERM"); await proc.exited; await s3.stop?.(); process.exit(0);
