/** Scratch: only the 100 × 20 HTTP-vs-stdio comparison of the team bench, for a given binary. */
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCephRgw } from "../s3/local-servers.ts";
import { measureRemoteLoad } from "./remote-load.ts";
import { serverEnv } from "./transfers.ts";

const s3 = await startCephRgw();
const sdk = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }, requestChecksumCalculation: "WHEN_REQUIRED" });
await sdk.send(new CreateBucketCommand({ Bucket: "bench-team" }));
await Promise.all(Array.from({ length: 100 }, (_, i) => sdk.send(new PutObjectCommand({ Bucket: "bench-team", Key: `obj-${String(i).padStart(5, "0")}.txt`, Body: "x" }))));
const env = serverEnv(s3, { name: "loopback", endpoint: s3.endpoint });
const dir = mkdtempSync(join(tmpdir(), "scratch-load-"));
for (const bin of (process.env.BINS ?? "dist/store-mcp-server").split(",")) {
  for (let i = 0; i < Number(process.env.RUNS ?? 2); i++) {
    const r = await measureRemoteLoad(bin, env, dir, "bench-team", "obj-00001.txt");
    console.log(`${bin}: http ${r.http.callsPerS.toFixed(0)}/s (${r.http.serverCpuMsPerCall.toFixed(2)} ms cpu, p50 ${r.http.p50Ms.toFixed(0)} p99 ${r.http.p99Ms.toFixed(0)}), stdio ${r.stdio.callsPerS.toFixed(0)}/s (${r.stdio.serverCpuMsPerCall.toFixed(2)} ms), ratio ${(r.http.callsPerS / r.stdio.callsPerS).toFixed(2)}`);
  }
}
await s3.stop();
process.exit(0);
