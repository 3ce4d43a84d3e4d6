/** The test S3 server (Ceph RGW, started by test/setup/preload.ts) and an SDK client to seed it. */
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import type { S3Server } from "../../scripts/s3/local-servers.ts";

let current: S3Server | undefined;
let startError = "the test preload did not run (run the tests with `bun test` from the project folder)";

export function setS3Server(server: S3Server | undefined, error?: string): void {
  current = server;
  if (error) startError = error;
}

/** The running server; throws (failing the test) when it could not start. */
export function s3(): S3Server {
  if (!current) throw new Error(`No S3 test server: ${startError}`);
  return current;
}

/** The environment a client passes to the binary for the test server. */
export function s3Env(): Record<string, string> {
  const server = s3();
  return {
    STORE_ENDPOINT_URL: server.endpoint,
    STORE_ACCESS_KEY_ID: server.accessKeyId,
    STORE_SECRET_ACCESS_KEY: server.secretAccessKey,
    STORE_REGION: server.region,
  };
}

/** The default store plus the test store again as the store "src", reached at `endpoint` (a proxy in front of it). */
export function withSourceStore(endpoint: string): Record<string, string> {
  const server = s3();
  return {
    ...s3Env(),
    STORE_STORES: "src",
    STORE_SRC_ENDPOINT_URL: endpoint,
    STORE_SRC_ACCESS_KEY_ID: server.accessKeyId,
    STORE_SRC_SECRET_ACCESS_KEY: server.secretAccessKey,
    STORE_SRC_REGION: server.region,
  };
}

/** An SDK client for arranging and checking state independently of the server under test. */
export function sdkClient(): S3Client {
  const server = s3();
  return new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

let counter = 0;
/** A bucket name unique to this run. */
export function uniqueBucket(tag: string): string {
  return `t-${tag}-${process.pid}-${Date.now().toString(36)}-${counter++}`.toLowerCase().slice(0, 63);
}

/** Creates a fresh bucket through the SDK and returns its name. */
export async function freshBucket(tag: string): Promise<string> {
  const bucket = uniqueBucket(tag);
  await sdkClient().send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

/** Every object under `prefix`, key → size, paging through the whole listing. */
export async function objectsUnder(bucket: string, prefix = ""): Promise<Map<string, number>> {
  const { ListObjectsV2Command } = await import("@aws-sdk/client-s3");
  const out = new Map<string, number>();
  let token: string | undefined;
  do {
    const page = await sdkClient().send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) out.set(o.Key!, o.Size!);
    token = page.NextContinuationToken;
  } while (token);
  return out;
}

/** The keys under `prefix`, sorted. */
export async function keysUnder(bucket: string, prefix = ""): Promise<string[]> {
  return [...(await objectsUnder(bucket, prefix)).keys()].sort();
}

/** The multipart uploads still open in `bucket` once the server's clean-up after a cancel had up to 5 s. */
export async function openUploadsAfterCleanUp(bucket: string): Promise<unknown[]> {
  const { ListMultipartUploadsCommand } = await import("@aws-sdk/client-s3");
  let uploads: unknown[] = [];
  for (let i = 0; i < 20; i++) {
    await Bun.sleep(250);
    uploads = (await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
    if (uploads.length === 0) break;
  }
  return uploads;
}
