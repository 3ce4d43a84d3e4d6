/** The bench's small objects: `count` of 4-64 KiB, random bytes, under `prefix`/d0 … d19/, 32 PUTs at a time. */
import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";

export async function putSmallObjects(sdk: S3Client, bucket: string, prefix: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < count) {
        const i = next++;
        const body = new Uint8Array(4096 + ((i * 7919) % 61440));
        crypto.getRandomValues(body.subarray(0, Math.min(body.length, 65536)));
        await sdk.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/d${i % 20}/f${i}.bin`, Body: body }));
      }
    }),
  );
}
