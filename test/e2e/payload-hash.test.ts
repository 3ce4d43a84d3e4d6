/**
 * Uploads are signed without a SHA-256 of their body (payload-hash.ts): every
 * part and single PUT the binary sends with Content-MD5 carries
 * UNSIGNED-PAYLOAD, the store (Ceph RGW) accepts them, and a request without
 * a body keeps the SDK's own payload hash.
 */

import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const EMPTY_SHA256 = createHash("sha256").update("").digest("hex");

test("upload parts and single PUTs are signed with UNSIGNED-PAYLOAD beside their Content-MD5, and stored whole", async () => {
  const bucket = await freshBucket("unsigned");
  const dir = tempDir("unsigned");
  const large = randomBytes(12 * 1024 * 1024 + 5, 31);
  writeFileSync(join(dir, "large.bin"), large);
  const proxy = startRecordingProxy(s3().endpoint);
  const { client, close } = await connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint },
    args: ["--allowed-dir", dir],
  });
  try {
    const up = await call(client, "upload_file", {
      local_file_path: join(dir, "large.bin"),
      bucket_name: bucket,
      object_key: "large.bin",
    });
    expect(up.isError, textOf(up)).toBeFalsy();
    const put = await call(client, "put_object", { bucket_name: bucket, object_key: "small.txt", content: "hello" });
    expect(put.isError, textOf(put)).toBeFalsy();
    const parts = proxy.requests.filter((q) => q.method === "PUT" && q.search.includes("partNumber="));
    expect(parts.length).toBe(3);
    expect(parts.map((q) => q.payloadHash)).toEqual(["UNSIGNED-PAYLOAD", "UNSIGNED-PAYLOAD", "UNSIGNED-PAYLOAD"]);
    expect(
      proxy.requests.filter((q) => q.method === "PUT" && q.path.endsWith("/small.txt")).map((q) => q.payloadHash),
    ).toEqual(["UNSIGNED-PAYLOAD"]);
    // Without a body (starting the multipart upload): the SDK's own hash, of nothing.
    expect(proxy.requests.find((q) => q.method === "POST" && q.search.includes("uploads"))?.payloadHash).toBe(
      EMPTY_SHA256,
    );
    const got = await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: "large.bin" }));
    expect(
      createHash("md5")
        .update(await got.Body!.transformToByteArray())
        .digest("hex"),
    ).toBe(createHash("md5").update(large).digest("hex"));
  } finally {
    await close();
    proxy.stop();
  }
}, 60_000);
