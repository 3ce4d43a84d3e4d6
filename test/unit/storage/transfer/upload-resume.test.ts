/**
 * Which uploads a kept one can continue (src/storage/transfer/upload-resume.ts):
 * one in parts from a known source, never one that fits a single PUT — for
 * that the state directory is not even asked (a copy of thousands of small
 * objects asked it once an object).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { KeptTransfers } from "../../../../src/runtime/kept-transfers.ts";
import { MIN_PART_SIZE, partSizeFor } from "../../../../src/storage/transfer/part-sizes.ts";
import { hasKeptUpload, objectSettings } from "../../../../src/storage/transfer/upload-resume.ts";
import type { UploadRequest } from "../../../../src/storage/transfer-types.ts";
import { tempDir } from "../../../helpers/files.ts";

const uploadOf = (size: number): UploadRequest =>
  ({
    bucket: "b",
    key: "k",
    size,
    contentType: "application/octet-stream",
    source: { id: "src:s3://a/k", version: '"e"', trusted: true },
  }) as UploadRequest;

/** A state directory holding a kept upload that `req` would continue. */
function keptFor(req: UploadRequest): { kept: KeptTransfers; lookups: () => number } {
  const kept = new KeptTransfers(join(tempDir("upload-resume"), "state"));
  kept.keepUpload({
    store: "s",
    bucket: req.bucket,
    key: req.key,
    upload_id: "u1",
    source: { id: req.source!.id, size: req.size, version: req.source!.version },
    part_size: partSizeFor(req.size),
    params: objectSettings(req),
    created_at: Date.now(),
  });
  let asked = 0;
  const upload = kept.upload.bind(kept);
  kept.upload = (to) => {
    asked++;
    return upload(to);
  };
  return { kept, lookups: () => asked };
}

test("an upload in parts continues the kept one recorded for it", () => {
  const req = uploadOf(3 * MIN_PART_SIZE);
  const { kept } = keptFor(req);
  expect(hasKeptUpload(req, { kept, store: "s" }, partSizeFor(req.size))).toBe(true);
});

test("an upload that fits one part is a single PUT: never continued, the state directory not asked", () => {
  const req = uploadOf(64 * 1024);
  const { kept, lookups } = keptFor(req);
  expect(hasKeptUpload(req, { kept, store: "s" }, partSizeFor(req.size))).toBe(false);
  expect(lookups()).toBe(0);
});
