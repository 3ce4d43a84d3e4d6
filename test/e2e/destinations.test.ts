/**
 * One running transfer per local destination, through the compiled binary
 * behind a slow link: two downloads of the same object to one new path at
 * once give one whole file and one clear DestinationBusy (before, they shared
 * one temp file and the loser failed LocalFileNotFound); a download called
 * again while the first runs as a job is refused at once, naming the job.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { startWanProxy, type WanProxy } from "../../scripts/bench/wan-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
let wan: WanProxy;
let bucket: string;
let data: Uint8Array;
const md5 = (b: Uint8Array) => createHash("md5").update(b).digest("hex");

beforeAll(async () => {
  wan = await startWanProxy(s3().endpoint, { delayMs: 50, windowBytes: 64 * 1024 });
  bucket = await freshBucket("dest");
  data = randomBytes(16 * MiB, 3);
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: data }));
}, 60_000);
afterAll(() => wan?.stop());

test("two downloads to one new path at once: one whole file, one DestinationBusy, no partial left", async () => {
  const dir = tempDir("dest-two");
  const { client, close } = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: wan.endpoint, STORE_CALL_BUDGET_SECONDS: "0" },
    args: ["--allowed-dir", dir],
  });
  try {
    const args = { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: join(dir, "big.bin") };
    const [a, b] = await Promise.all([call(client, "get_object", args), call(client, "get_object", args)]);
    const results = [a, b].sort((x, y) => Number(x.isError ?? false) - Number(y.isError ?? false));
    expect(results[0]!.isError, textOf(results[0]!)).toBeFalsy();
    expect(results[1]!.isError).toBe(true);
    expect(textOf(results[1]!)).toContain("DestinationBusy");
    expect(textOf(results[1]!)).not.toContain("LocalFileNotFound");
    expect(md5(readFileSync(join(dir, "big.bin")))).toBe(md5(data));
    expect(readdirSync(dir)).toEqual(["big.bin"]);
  } finally {
    await close();
  }
}, 90_000);

test("a download called again while the first runs as a job is refused at once, naming the job; the job's file is whole", async () => {
  const dir = tempDir("dest-job");
  const { client, close } = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: wan.endpoint, STORE_CALL_BUDGET_SECONDS: "1" },
    args: ["--allowed-dir", dir],
  });
  try {
    const args = { bucket_name: bucket, object_key: "big.bin", mode: "download", local_path: join(dir, "big.bin") };
    const first = await call(client, "get_object", args);
    const job = first.structuredContent?.job as { id: string; state: string } | undefined;
    expect(job?.state, textOf(first)).toBe("running");
    const started = performance.now();
    const again = await call(client, "get_object", args);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(again.isError).toBe(true);
    expect(textOf(again)).toContain("DestinationBusy");
    expect(textOf(again)).toContain(job!.id);
    let status = await call(client, "job_status", { job_id: job!.id });
    for (let i = 0; i < 60 && status.structuredContent?.job?.state === "running"; i++)
      status = await call(client, "job_status", { job_id: job!.id });
    expect(status.structuredContent?.job?.state, textOf(status)).toBe("done");
    expect(md5(readFileSync(join(dir, "big.bin")))).toBe(md5(data));
    expect(readdirSync(dir)).toEqual(["big.bin"]);
  } finally {
    await close();
  }
}, 120_000);
