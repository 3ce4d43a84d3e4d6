/**
 * The sandbox under a real race: while a python3 process swaps a directory
 * inside the allowed one with a symlink to outside (renameat2 RENAME_EXCHANGE,
 * in a tight loop), hundreds of uploads and downloads through the compiled
 * binary never read, create, replace or leave a file outside.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient } from "../helpers/s3.ts";
import { startSwapper } from "../helpers/swapper.ts";

const CALLS = 200;
let base: string;
let allowed: string;
let outside: string;
let bucket: string;

beforeAll(async () => {
  base = tempDir("race");
  allowed = join(base, "allowed");
  outside = join(base, "outside");
  mkdirSync(join(allowed, "sub"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(allowed, "sub", "secret.txt"), "inside");
  writeFileSync(join(allowed, "sub", "victim.txt"), "inside victim");
  writeFileSync(join(outside, "secret.txt"), "OUTSIDE SECRET");
  writeFileSync(join(outside, "victim.txt"), "OUTSIDE VICTIM");
  symlinkSync(outside, join(allowed, "swap"));
  bucket = await freshBucket("race");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "payload.txt", Body: "FROM THE STORE" }));
});
afterAll(() => {});

function outsideUntouched(): void {
  expect(readdirSync(outside).sort()).toEqual(["secret.txt", "victim.txt"]);
  expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("OUTSIDE SECRET");
  expect(readFileSync(join(outside, "victim.txt"), "utf8")).toBe("OUTSIDE VICTIM");
}

test("uploads under a directory/symlink swapper never ship a file from outside", async () => {
  const { client, close } = await connectBinary({ env: s3Env(), args: ["--allowed-dir", allowed] });
  const swapper = await startSwapper(join(allowed, "sub"), join(allowed, "swap"));
  let uploaded = 0;
  try {
    for (let i = 0; i < CALLS; i++) {
      const r = await call(client, "upload_file", {
        local_file_path: "sub/secret.txt",
        bucket_name: bucket,
        object_key: `up/${i}`,
      });
      if (!r.isError) uploaded++;
    }
  } finally {
    expect(await swapper.stop()).toBeGreaterThan(100);
    await close();
  }
  const s3 = sdkClient();
  for (let i = 0; i < CALLS; i++) {
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `up/${i}` })).then(
      (o) => o.Body!.transformToString(),
      () => undefined,
    );
    expect(got === undefined || got === "inside").toBe(true);
  }
  expect(uploaded).toBeGreaterThan(0);
  outsideUntouched();
}, 120_000);

test("downloads under the swapper never create, replace or leave a file outside", async () => {
  const { client, close } = await connectBinary({ env: s3Env(), args: ["--allowed-dir", allowed] });
  const swapper = await startSwapper(join(allowed, "sub"), join(allowed, "swap"));
  let written = 0;
  try {
    for (let i = 0; i < CALLS; i++) {
      const [path, overwrite] =
        i % 3 === 0
          ? ["sub/victim.txt", true]
          : i % 3 === 1
            ? [`sub/new-${i}.txt`, false]
            : [`sub/deep-${i}/new.txt`, false];
      const r = await call(client, "get_object", {
        bucket_name: bucket,
        object_key: "payload.txt",
        mode: "download",
        local_path: path,
        overwrite,
      });
      if (!r.isError) written++;
    }
  } finally {
    expect(await swapper.stop()).toBeGreaterThan(100);
    await close();
  }
  expect(written).toBeGreaterThan(0);
  outsideUntouched();
  // Nothing half-written stays behind inside either.
  const leftovers = readdirSync(allowed, { recursive: true })
    .map(String)
    .filter((n) => n.endsWith(".partial"));
  expect(leftovers).toEqual([]);
}, 120_000);
