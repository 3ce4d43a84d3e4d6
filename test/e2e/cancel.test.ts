/** Cancellation and shutdown through the compiled binary: work stops, nothing partial is left. */

import { beforeAll, expect, test } from "bun:test";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { keptRecords } from "../helpers/kept.ts";
import { connectBinary, requireBinary } from "../helpers/mcp.ts";
import { INITIALIZE, INITIALIZED } from "../helpers/raw-stdio.ts";
import { freshBucket, openUploadsAfterCleanUp, s3Env, sdkClient } from "../helpers/s3.ts";

const SIZE = 96 * 1024 * 1024;
let bucket: string;
let dir: string;

beforeAll(async () => {
  bucket = await freshBucket("cancel");
  dir = tempDir("cancel");
  const data = randomBytes(SIZE, 5);
  writeFileSync(join(dir, "huge.bin"), data);
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "huge.bin", Body: data }));
}, 120_000);

// With a state directory a cut download keeps its hidden temp file to resume (resume.test.ts); without one, nothing is left.
test("a cancelled download stops, leaves nothing at local_path and (state directory off) no temp file", async () => {
  const { client, close } = await connectBinary({
    env: { ...s3Env(), STORE_STATE_DIR: "off" },
    args: ["--allowed-dir", dir],
  });
  try {
    const controller = new AbortController();
    const pending = client.callTool(
      {
        name: "get_object",
        arguments: { bucket_name: bucket, object_key: "huge.bin", mode: "download", local_path: "dl/huge.bin" },
      },
      undefined,
      { signal: controller.signal },
    );
    await Bun.sleep(250);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await Bun.sleep(1000); // the server's clean-up runs after the cancel notification
    expect(readdirSync(dir).includes("dl") ? readdirSync(join(dir, "dl")) : []).toEqual([]);
    // The server still serves.
    const r = await client.callTool({ name: "list_buckets", arguments: {} });
    expect(r.isError).toBeFalsy();
  } finally {
    await close();
  }
}, 60_000);

test("a cancelled multipart upload is kept to resume (no object at the key, recorded in the state directory); with STORE_STATE_DIR=off, or one that cannot be written, it is aborted", async () => {
  // /proc cannot hold a directory: nothing can be recorded there, so nothing may be kept.
  for (const stateDir of [tempDir("cancel-state"), "off", "/proc/store-mcp-state"]) {
    const cleaned = stateDir === "off" || stateDir.startsWith("/proc");
    const key = stateDir === "off" ? "cancelled-off.bin" : cleaned ? "cancelled-unwritable.bin" : "cancelled.bin";
    const { client, close } = await connectBinary({
      env: { ...s3Env(), STORE_STATE_DIR: stateDir },
      args: ["--allowed-dir", dir],
    });
    try {
      const controller = new AbortController();
      const pending = client.callTool(
        { name: "upload_file", arguments: { local_file_path: "huge.bin", bucket_name: bucket, object_key: key } },
        undefined,
        { signal: controller.signal },
      );
      // Cancelled once the multipart upload exists (a loaded machine may take a while to start it).
      const started = async () =>
        ((await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).some(
          (u) => u.Key === key,
        );
      for (let i = 0; i < 100 && !(await started()); i++) await Bun.sleep(50);
      await Bun.sleep(100);
      controller.abort();
      await expect(pending).rejects.toThrow();
      const objects =
        (await sdkClient().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key }))).Contents ?? [];
      expect(objects).toEqual([]);
      if (cleaned) {
        expect(await openUploadsAfterCleanUp(bucket)).toEqual([]);
        continue;
      }
      await Bun.sleep(500);
      const kept = keptRecords(stateDir).uploads;
      expect(kept.map((u) => u.key)).toEqual([key]);
      const open = (await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
      expect(open.map((u) => u.UploadId)).toEqual([kept[0]!.upload_id]);
      // The same call finishes it; nothing is left.
      const done = await client.callTool({
        name: "upload_file",
        arguments: { local_file_path: "huge.bin", bucket_name: bucket, object_key: key },
      });
      expect(done.isError).toBeFalsy();
      expect(await openUploadsAfterCleanUp(bucket)).toEqual([]);
    } finally {
      await close();
    }
  }
}, 120_000);

// Every signal the npm launcher forwards (and SIGHUP: a closing terminal) ends the server cleanly.
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
  test(`${signal} during a download: the process exits 0 and leaves no partial file (state directory off)`, async () => {
    const proc = Bun.spawn([requireBinary(), "--allowed-dir", dir], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "", ...s3Env(), STORE_STATE_DIR: "off" },
    });
    const target = `sig-${signal}`;
    const call = {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: {
        name: "get_object",
        arguments: { bucket_name: bucket, object_key: "huge.bin", mode: "download", local_path: `${target}/huge.bin` },
      },
    };
    for (const m of [INITIALIZE, INITIALIZED, call]) proc.stdin.write(`${JSON.stringify(m)}\n`);
    proc.stdin.flush();
    // Signal once the download is under way (its temp file exists), or at the latest after 2 s.
    for (let i = 0; i < 100 && !(readdirSync(dir).includes(target) && readdirSync(join(dir, target)).length > 0); i++)
      await Bun.sleep(20);
    proc.kill(signal);
    expect(await proc.exited).toBe(0);
    expect(await new Response(proc.stderr).text()).toContain(`shutting down (${signal})`);
    // Either the download finished before the signal (a whole file) or nothing is there: never a part.
    const left = readdirSync(dir).includes(target) ? readdirSync(join(dir, target)) : [];
    expect(left.filter((f) => f !== "huge.bin")).toEqual([]);
    if (left.includes("huge.bin")) expect(statSync(join(dir, target, "huge.bin")).size).toBe(SIZE);
  }, 60_000);
}
