import { z } from "zod";

/** Schema fragments shared by several tools. */

export const bucketName = z
  .string()
  .min(1, "bucket_name must not be empty")
  .max(255, "bucket_name is at most 255 characters")
  .refine((s) => !s.includes("/"), "bucket_name is a bucket's name only, without a slash or key (put the path in object_key or prefix)")
  .describe("Name of the bucket, e.g. \"my-data\" (no s3:// and no key).");

export const objectKey = z
  .string()
  .min(1, "object_key must not be empty")
  .refine((s) => Buffer.byteLength(s, "utf8") <= 1024, "object_key is at most 1024 bytes (UTF-8)")
  .describe("Key of the object inside the bucket, e.g. \"reports/2024/q1.csv\" (no leading slash needed; it would be part of the key).");

export const versionId = z
  .string()
  .min(1, "version_id must not be empty")
  .max(1024)
  .describe("Read this exact version of a versioned object (as listed by the store). Omit for the latest version.");
