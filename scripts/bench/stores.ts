/**
 * Copies between stores (issue #26) against `rclone copy src: dst:` in the
 * same run: one large object and a prefix of small ones, from the second
 * Ceph user's store into the first user's, directly on loopback and with the
 * source behind the WAN model. Ours streams through the server (copy_object /
 * copy_prefix with source_store); rclone streams through itself the same way.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { procMemoryMb, timedCommand } from "./measure.ts";
import { startServer } from "./server-session.ts";
import { rcloneEnv, serverEnv, type Network, type Store } from "./transfers.ts";

export interface StoreCopyRow {
  network: string;
  job: string;
  oursMs: number;
  peakMb: number;
  rcloneMs: number;
}

/** The second user's store as rclone's remote "src" (the first stays "bench"). */
function srcRemote(other: { accessKeyId: string; secretAccessKey: string }, endpoint: string, region: string): Record<string, string> {
  return { RCLONE_CONFIG_SRC_TYPE: "s3", RCLONE_CONFIG_SRC_PROVIDER: "Ceph", RCLONE_CONFIG_SRC_ENDPOINT: endpoint, RCLONE_CONFIG_SRC_ACCESS_KEY_ID: other.accessKeyId, RCLONE_CONFIG_SRC_SECRET_ACCESS_KEY: other.secretAccessKey, RCLONE_CONFIG_SRC_REGION: region };
}

/** Seeds the source store: one object of `bigMiB` and `small` objects of 4-64 KiB under small/. */
export async function seedSource(other: S3Client, bucket: string, bigMiB: number, small: number): Promise<void> {
  await other.send(new CreateBucketCommand({ Bucket: bucket }));
  const big = new Uint8Array(bigMiB * 2 ** 20);
  for (let at = 0; at < big.length; at += 65536) crypto.getRandomValues(big.subarray(at, at + 65536));
  await other.send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: big }));
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < small) {
        const i = next++;
        const body = new Uint8Array(4096 + ((i * 7919) % 61440));
        crypto.getRandomValues(body.subarray(0, Math.min(body.length, 65536)));
        await other.send(new PutObjectCommand({ Bucket: bucket, Key: `small/d${i % 20}/f${i}.bin`, Body: body }));
      }
    }),
  );
}

export async function measureStoreCopies(binary: string, store: Store, other: { accessKeyId: string; secretAccessKey: string }, source: Network, target: Network, srcBucket: string, dstBucket: string, work: string, tag: string): Promise<StoreCopyRow[]> {
  const env = { ...serverEnv(store, target), STORE_STORES: "src", STORE_SRC_ENDPOINT_URL: source.endpoint, STORE_SRC_ACCESS_KEY_ID: other.accessKeyId, STORE_SRC_SECRET_ACCESS_KEY: other.secretAccessKey };
  const rclone = { ...rcloneEnv(store, target), ...srcRemote(other, source.endpoint, store.region) };
  const rows: StoreCopyRow[] = [];
  // Each job on a fresh server: VmHWM is the process's peak, so a second job on the same server would report the first's.
  const job = async (run: (call: Awaited<ReturnType<typeof startServer>>["call"]) => Promise<void>): Promise<{ ms: number; peakMb: number }> => {
    const server = await startServer(binary, env, work);
    try {
      const started = performance.now();
      await run(server.call.bind(server));
      return { ms: performance.now() - started, peakMb: procMemoryMb(server.pid, "VmHWM") };
    } finally {
      await server.close();
    }
  };
  const big = await job(async (call) => void (await call("copy_object", { source_store: "src", source_bucket: srcBucket, source_key: "big.bin", bucket_name: dstBucket, object_key: `${tag}/ours/big.bin` })));
  rows.push({ network: tag, job: "one large object", oursMs: big.ms, peakMb: big.peakMb, rcloneMs: await timedCommand(["rclone", "copyto", `src:${srcBucket}/big.bin`, `bench:${dstBucket}/${tag}/rclone/big.bin`], rclone) });
  const small = await job(async (call) => {
    const r = await call("copy_prefix", { source_store: "src", source_bucket: srcBucket, source_prefix: "small", bucket_name: dstBucket, prefix: `${tag}/ours/small`, max_objects: 100_000 });
    if (r.structuredContent?.counts?.failed) throw new Error(`copy_prefix failed for ${r.structuredContent.counts.failed} objects`);
  });
  rows.push({ network: tag, job: "a prefix of small objects", oursMs: small.ms, peakMb: small.peakMb, rcloneMs: await timedCommand(["rclone", "copy", `src:${srcBucket}/small`, `bench:${dstBucket}/${tag}/rclone/small`, "--transfers", "32", "--checkers", "32"], rclone) });
  return rows;
}
