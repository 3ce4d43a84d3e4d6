/**
 * Several stores for the end-to-end tests: Ceph RGW's two users as the default store and "other" (each with its own
 * buckets), plus "broken" (a key the store does not know); a bucket of each; and, for the copies between them, a
 * server with its own state directory and a 13 MiB object in the other store.
 */
import { createHash } from "node:crypto";
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { randomBytes, tempDir } from "./files.ts";
import { connectBinary } from "./mcp.ts";
import { freshBucket, s3, s3Env, sdkClient, uniqueBucket } from "./s3.ts";

export const BROKEN_SECRET = "brokensecret0000000000000000000000000009";

export function otherClient(): S3Client {
  const server = s3();
  return new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: server.other!,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

/** The keys in a bucket of the other user's store, sorted. */
export async function listed(bucket: string): Promise<string[]> {
  const out = await otherClient().send(new ListObjectsV2Command({ Bucket: bucket }));
  return (out.Contents ?? []).map((o) => o.Key!).sort();
}

/** The default store (user test), "other" (the second user) and "broken" (a key the store does not know). */
export function severalEnv(extra: Record<string, string> = {}): Record<string, string> {
  const server = s3();
  return {
    ...s3Env(),
    STORE_STORES: "other,broken",
    STORE_OTHER_ENDPOINT_URL: server.endpoint,
    STORE_OTHER_ACCESS_KEY_ID: server.other!.accessKeyId,
    STORE_OTHER_SECRET_ACCESS_KEY: server.other!.secretAccessKey,
    STORE_BROKEN_ENDPOINT_URL: server.endpoint,
    STORE_BROKEN_ACCESS_KEY_ID: "BROKENACCESSKEY00009",
    STORE_BROKEN_SECRET_ACCESS_KEY: BROKEN_SECRET,
    ...extra,
  };
}

/** A bucket of the default store ("ours") and one of the other store ("theirs", holding note.txt). */
export async function storeBuckets(): Promise<{ ours: string; theirs: string }> {
  const ours = await freshBucket("mine");
  const theirs = uniqueBucket("theirs");
  await otherClient().send(new CreateBucketCommand({ Bucket: theirs }));
  await otherClient().send(new PutObjectCommand({ Bucket: theirs, Key: "note.txt", Body: "from the other store" }));
  return { ours, theirs };
}

/** For copies between stores: a server over the three stores with its own state directory, and big.bin in `theirs`. */
export async function copySession(theirs: string) {
  const big = randomBytes(13 * 1024 * 1024 + 17, 26);
  /** This server's own state directory: what it keeps to resume is recorded there. */
  const state = tempDir("stores-state");
  const session = await connectBinary({ env: severalEnv({ STORE_STATE_DIR: state }) });
  await otherClient().send(
    new PutObjectCommand({
      Bucket: theirs,
      Key: "big.bin",
      Body: big,
      ContentType: "application/x-test",
      Metadata: { origin: "other" },
    }),
  );
  return { session, state, big };
}

export const md5 = (b: Uint8Array) => createHash("md5").update(b).digest("hex");

/** An object of the default store, whole. */
export const stored = async (bucket: string, key: string) =>
  new Uint8Array(
    await (await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray(),
  );

/** An object of the other store's bucket stored as `count` parts of `part` (its ETag no MD5 of its bytes). */
export async function multipartSource(
  bucket: string,
  key: string,
  part: Uint8Array,
  count: number,
  headers: { ContentType?: string; Metadata?: Record<string, string> } = {},
): Promise<Buffer> {
  const other = otherClient();
  const { CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand } = await import(
    "@aws-sdk/client-s3"
  );
  const upload = await other.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ...headers }));
  const parts = [];
  for (let n = 1; n <= count; n++)
    parts.push({
      PartNumber: n,
      ETag: (
        await other.send(
          new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: upload.UploadId, PartNumber: n, Body: part }),
        )
      ).ETag,
    });
  await other.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: key,
      UploadId: upload.UploadId,
      MultipartUpload: { Parts: parts },
    }),
  );
  return Buffer.concat(Array.from({ length: count }, () => part));
}
