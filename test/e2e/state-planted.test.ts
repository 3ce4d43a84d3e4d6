/**
 * Records planted in the state directory (hardening, fourth round), through
 * the compiled binary: an expired download record whose temp file lies
 * outside the download's directory never makes a download unlink it; an
 * expired upload record for a bucket outside --bucket never makes the server
 * abort that multipart upload; a state directory others can write to is not
 * used at all, with a warning. Records are planted as the JSON file earlier
 * versions kept (which this version takes in), so each test fails on a build
 * that trusted them.
 */

import { beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const DAY = 24 * 3600 * 1000;
let bucket: string;
let other: string;

beforeAll(async () => {
  bucket = await freshBucket("planted");
  other = await freshBucket("planted-other");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "small.txt", Body: "small" }));
}, 60_000);

function plant(state: string, records: { uploads?: unknown[]; downloads?: unknown[] }, mode = 0o700): void {
  mkdirSync(state, { recursive: true });
  chmodSync(state, mode);
  writeFileSync(
    join(state, "kept-transfers.json"),
    JSON.stringify({ uploads: records.uploads ?? [], downloads: records.downloads ?? [] }),
  );
}

test("an expired download record never makes a download unlink a file outside its own directory", async () => {
  const work = tempDir("planted-work");
  const elsewhere = tempDir("planted-elsewhere");
  const victim = join(elsewhere, ".precious.0123456789ab.partial");
  writeFileSync(victim, "not the server's");
  const state = join(tempDir("planted-state"), "state");
  plant(state, {
    downloads: [
      {
        store: s3().endpoint,
        bucket,
        key: "x",
        etag: "e",
        size: 1,
        target: join(elsewhere, "precious"),
        temp: victim,
        have: [],
        created_at: Date.now() - 2 * DAY,
      },
    ],
  });
  const { client, close } = await connectBinary({
    env: { ...s3Env(), STORE_STATE_DIR: state },
    args: ["--allowed-dir", work],
  });
  try {
    const r = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "small.txt",
      mode: "download",
      local_path: join(work, "small.txt"),
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(existsSync(victim)).toBe(true);
  } finally {
    await close();
  }
}, 60_000);

test("an expired upload record for a bucket outside --bucket is never aborted", async () => {
  const { UploadId } = await sdkClient().send(new CreateMultipartUploadCommand({ Bucket: other, Key: "theirs.bin" }));
  const work = tempDir("planted-up");
  // Large enough to go in parts: the expired records are looked at when a multipart upload starts.
  writeFileSync(join(work, "mine.bin"), randomBytes(24 * 1024 * 1024, 7));
  const state = join(tempDir("planted-state"), "state");
  plant(state, {
    uploads: [
      {
        store: s3().endpoint,
        bucket: other,
        key: "theirs.bin",
        upload_id: UploadId,
        source: { id: "x", size: 1, version: "1" },
        part_size: 5242880,
        params: "",
        created_at: Date.now() - 2 * DAY,
      },
    ],
  });
  const { client, close } = await connectBinary({
    env: { ...s3Env(), STORE_STATE_DIR: state },
    args: ["--allowed-dir", work, "--bucket", bucket],
  });
  try {
    const r = await call(client, "upload_file", {
      local_file_path: "mine.bin",
      bucket_name: bucket,
      object_key: "mine.bin",
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    const open = (await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: other }))).Uploads ?? [];
    expect(open.map((u) => u.UploadId)).toContain(UploadId);
  } finally {
    await close();
    await sdkClient()
      .send(new AbortMultipartUploadCommand({ Bucket: other, Key: "theirs.bin", UploadId }))
      .catch(() => {});
  }
}, 60_000);

test("a state directory others can write to is not used: a warning, and its records are not acted on", async () => {
  const work = tempDir("planted-open");
  const victim = join(work, ".small.txt.0123456789ab.partial");
  writeFileSync(victim, "planted");
  const state = join(tempDir("planted-state"), "state");
  plant(
    state,
    {
      downloads: [
        {
          store: s3().endpoint,
          bucket,
          key: "small.txt",
          etag: "e",
          size: 1,
          target: join(work, "small.txt"),
          temp: victim,
          have: [],
          created_at: Date.now() - 2 * DAY,
        },
      ],
    },
    0o777,
  );
  const { client, close, stderr } = await connectBinary({
    env: { ...s3Env(), STORE_STATE_DIR: state },
    args: ["--allowed-dir", work],
  });
  try {
    const r = await call(client, "get_object", {
      bucket_name: bucket,
      object_key: "small.txt",
      mode: "download",
      local_path: join(work, "got.txt"),
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(stderr()).toContain("is not used (others can write to it)");
    expect(existsSync(victim)).toBe(true);
    expect(existsSync(join(state, "state.db"))).toBe(false);
  } finally {
    await close();
  }
}, 60_000);
