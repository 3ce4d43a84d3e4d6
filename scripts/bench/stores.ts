/**
 * Copies between stores (issue #26) against `rclone copy src: dst:` in the
 * same run: one large object and a prefix of small ones, from the second
 * Ceph user's store into the first user's, directly on loopback and with the
 * source behind the WAN model. Ours streams through the server (copy_object /
 * copy_prefix with source_store); rclone streams through itself the same way.
 */
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { procCpuMs, procMemoryMb, timedRun } from "./measure.ts";
import { startServer } from "./server-session.ts";
import { putSmallObjects } from "./small-objects.ts";
import { type Network, rcloneEnv, type Store, serverEnv } from "./transfers.ts";

export interface StoreCopyRow {
  network: string;
  job: string;
  oursMs: number;
  /** The server's CPU for the call alone (every thread), in the run with the best time. */
  oursCpuMs: number;
  peakMb: number;
  rcloneMs: number;
  /** rclone's whole process, start-up included, in its run with the best time. */
  rcloneCpuMs: number;
}

/** The second user's store as rclone's remote "src" (the first stays "bench"). */
function srcRemote(
  other: { accessKeyId: string; secretAccessKey: string },
  endpoint: string,
  region: string,
): Record<string, string> {
  return {
    RCLONE_CONFIG_SRC_TYPE: "s3",
    RCLONE_CONFIG_SRC_PROVIDER: "Ceph",
    RCLONE_CONFIG_SRC_ENDPOINT: endpoint,
    RCLONE_CONFIG_SRC_ACCESS_KEY_ID: other.accessKeyId,
    RCLONE_CONFIG_SRC_SECRET_ACCESS_KEY: other.secretAccessKey,
    RCLONE_CONFIG_SRC_REGION: region,
  };
}

/** The large object's multipart twin: parts of this size, as S3 tools store an object that large. */
export const SOURCE_PART_MIB = 8;

/**
 * Seeds the source store: one object of `bigMiB` stored with one PutObject
 * (big.bin: its ETag is the MD5 of its bytes, which a copy checks), the same
 * size as SOURCE_PART_MIB parts (big-mp.bin: how S3 tools store an object that
 * large; its ETag is not an MD5 of the bytes), and `small` objects of
 * 4-64 KiB under small/.
 */
export async function seedSource(other: S3Client, bucket: string, bigMiB: number, small: number): Promise<void> {
  await other.send(new CreateBucketCommand({ Bucket: bucket }));
  const big = new Uint8Array(bigMiB * 2 ** 20);
  for (let at = 0; at < big.length; at += 65536) crypto.getRandomValues(big.subarray(at, at + 65536));
  await other.send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: big }));
  const upload = await other.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: "big-mp.bin" }));
  const part = SOURCE_PART_MIB * 2 ** 20;
  const parts: { PartNumber: number; ETag: string | undefined }[] = [];
  for (let at = 0, n = 1; at < big.length; at += part, n++) {
    const out = await other.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: "big-mp.bin",
        UploadId: upload.UploadId,
        PartNumber: n,
        Body: big.subarray(at, Math.min(big.length, at + part)),
      }),
    );
    parts.push({ PartNumber: n, ETag: out.ETag });
  }
  await other.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: "big-mp.bin",
      UploadId: upload.UploadId,
      MultipartUpload: { Parts: parts },
    }),
  );
  await putSmallObjects(other, bucket, "small", small);
}

/** RGW frees a deleted object's data in the background (rgw gc, every 5 s here): give it that long before the next timing. */
const GC_SETTLE_MS = 7_000;

export async function measureStoreCopies(
  binary: string,
  store: Store,
  other: { accessKeyId: string; secretAccessKey: string },
  source: Network,
  target: Network,
  srcBucket: string,
  dstBucket: string,
  work: string,
  tag: string,
): Promise<StoreCopyRow[]> {
  const dst = new S3Client({
    endpoint: target.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
  });
  // A large copy is deleted once timed: the bench's Ceph keeps objects in memory (memstore), and every run adds 1 GiB per copy.
  const dropLarge = async (...keys: string[]) => {
    for (const key of keys) await dst.send(new DeleteObjectCommand({ Bucket: dstBucket, Key: key }));
    await Bun.sleep(GC_SETTLE_MS);
  };
  const env = {
    ...serverEnv(store, target),
    STORE_STORES: "src",
    STORE_SRC_ENDPOINT_URL: source.endpoint,
    STORE_SRC_ACCESS_KEY_ID: other.accessKeyId,
    STORE_SRC_SECRET_ACCESS_KEY: other.secretAccessKey,
    // What doctor tells an operator of a Ceph store, as for the destination (serverEnv) and rclone's remotes.
    STORE_SRC_PROVIDER: "ceph",
  };
  const rclone = { ...rcloneEnv(store, target), ...srcRemote(other, source.endpoint, store.region) };
  const rows: StoreCopyRow[] = [];
  // Each job on a fresh server: VmHWM is the process's peak, so a second job on the same server would report the first's.
  const job = async (
    run: (call: Awaited<ReturnType<typeof startServer>>["call"]) => Promise<void>,
  ): Promise<{ ms: number; cpuMs: number; peakMb: number }> => {
    const server = await startServer(binary, env, work);
    try {
      const cpuBefore = procCpuMs(server.pid);
      const started = performance.now();
      await run(server.call.bind(server));
      const ms = performance.now() - started;
      return { ms, cpuMs: procCpuMs(server.pid) - cpuBefore, peakMb: procMemoryMb(server.pid, "VmHWM") };
    } finally {
      await server.close();
    }
  };
  // A large copy twice each, taking turns (ours first, then rclone first): the first large write after seeding ran
  // up to 25% slower than the next whoever made it, and one order would hand that to one side. Best time of two,
  // higher peak of two.
  for (const [key, what] of [
    ["big.bin", "one large object"],
    ["big-mp.bin", "one large object in parts"],
  ] as const) {
    const ours = async () => {
      const run = await job(
        async (call) =>
          void (await call("copy_object", {
            source_store: "src",
            source_bucket: srcBucket,
            source_key: key,
            bucket_name: dstBucket,
            object_key: `${tag}/ours/${key}`,
          })),
      );
      await dropLarge(`${tag}/ours/${key}`);
      return run;
    };
    const theirs = async () => {
      const run = await timedRun(
        ["rclone", "copyto", `src:${srcBucket}/${key}`, `bench:${dstBucket}/${tag}/rclone/${key}`],
        rclone,
      );
      await dropLarge(`${tag}/rclone/${key}`);
      return run;
    };
    const first = await ours();
    const [r1, r2] = [await theirs(), await theirs()];
    const second = await ours();
    const best = first.ms <= second.ms ? first : second;
    const rcloneBest = r1.ms <= r2.ms ? r1 : r2;
    rows.push({
      network: tag,
      job: what,
      oursMs: best.ms,
      oursCpuMs: best.cpuMs,
      peakMb: Math.max(first.peakMb, second.peakMb),
      rcloneMs: rcloneBest.ms,
      rcloneCpuMs: rcloneBest.cpuMs,
    });
  }
  const small = await job(async (call) => {
    const r = await call("copy_prefix", {
      source_store: "src",
      source_bucket: srcBucket,
      source_prefix: "small",
      bucket_name: dstBucket,
      prefix: `${tag}/ours/small`,
      max_objects: 100_000,
    });
    if (r.structuredContent?.counts?.failed)
      throw new Error(`copy_prefix failed for ${r.structuredContent.counts.failed} objects`);
  });
  const rcloneSmall = await timedRun(
    [
      "rclone",
      "copy",
      `src:${srcBucket}/small`,
      `bench:${dstBucket}/${tag}/rclone/small`,
      "--transfers",
      "32",
      "--checkers",
      "32",
    ],
    rclone,
  );
  rows.push({
    network: tag,
    job: "a prefix of small objects",
    oursMs: small.ms,
    oursCpuMs: small.cpuMs,
    peakMb: small.peakMb,
    rcloneMs: rcloneSmall.ms,
    rcloneCpuMs: rcloneSmall.cpuMs,
  });
  return rows;
}
