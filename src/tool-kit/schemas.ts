import { z } from "zod";
import { SSE_ALGORITHMS, type SseAlgorithm, type WriteEncryption } from "../config/encryption-config.ts";
import { ActionableError } from "../runtime/errors.ts";

/** Schema fragments shared by several tools. */

/**
 * Marks on the fragments that name a bucket or a key a call touches (a copy's source apart: it is in the source
 * store). The call wrapper finds them in a tool's input schema (addresses.ts) and checks every such argument against
 * the store's bucket allowlist and key rules before anything else runs: a new tool gets the check by using the
 * fragments. A mark is a check that always passes; it survives .describe() and is not in the JSON Schema.
 */
export const ADDRESS_MARKS = {
  bucket: z.refine(() => true),
  key: z.refine(() => true),
  sourceBucket: z.refine(() => true),
  sourceKey: z.refine(() => true),
} as const;

const bucketText = z
  .string()
  .min(1, "bucket_name must not be empty")
  .max(255, "bucket_name is at most 255 characters")
  .refine(
    (s) => !s.includes("/"),
    "bucket_name is a bucket's name only, without a slash or key (put the path in object_key or prefix)",
  );

const keyText = z
  .string()
  .min(1, "object_key must not be empty")
  .refine((s) => Buffer.byteLength(s, "utf8") <= 1024, "object_key is at most 1024 bytes (UTF-8)");

export const bucketName = bucketText.check(ADDRESS_MARKS.bucket);
export const objectKey = keyText.check(ADDRESS_MARKS.key);
/** A prefix a bulk tool reads or writes keys under: its segments are checked as a key's are. */
export const keyPrefix = z.string().max(1024).check(ADDRESS_MARKS.key);
export const sourceKeyPrefix = z.string().max(1024).check(ADDRESS_MARKS.sourceKey);
/** A bucket to be made: its name is checked by the naming rules (bucket-naming.ts), not this fragment's. */
export const newBucketName = z.string().min(1, "bucket_name must not be empty").max(255).check(ADDRESS_MARKS.bucket);
/** A copy's source, in the source store (source_store) when the call names one. */
export const sourceBucketName = bucketText.check(ADDRESS_MARKS.sourceBucket);
export const sourceObjectKey = keyText.check(ADDRESS_MARKS.sourceKey);

export const versionId = z.string().min(1, "version_id must not be empty").max(1024);

/** A header value: one line, bounded. */
export const headerValue = (what: string) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(1024)
    .refine((s) => !/[\r\n\0]/.test(s), `${what} must be a single line`);

/**
 * A value the store receives as an HTTP header of a signed request: printable ASCII. The SDK signs other characters
 * as they are in the string, fetch sends other bytes, and the store answered SignatureDoesNotMatch ("fix the secret
 * key") or fetch refused the header; the AWS CLI refuses such metadata up front too.
 */
const asciiHeaderValue = (what: string) =>
  headerValue(what).refine(
    (s) => /^[\x20-\x7e]*$/.test(s),
    `${what} must be printable ASCII (S3 sends it as an HTTP header); percent-encode other text, e.g. caf%C3%A9`,
  );

export const contentType = asciiHeaderValue("content_type").refine(
  (s) => /^[\w.+-]+\/[\w.+-]+/.test(s),
  "content_type must look like type/subtype, e.g. text/plain",
);

export const storageClass = z
  .string()
  .regex(
    /^[A-Z0-9_]{1,64}$/,
    "storage_class is an uppercase name such as STANDARD, STANDARD_IA, INTELLIGENT_TIERING, GLACIER_IR",
  );

export const cacheControl = asciiHeaderValue("cache_control");

/** S3 user metadata: lowercase-insensitive names, at most 2 KB in all. */
export const metadata = z
  .record(
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "metadata names are letters, digits, '.', '_' and '-'"),
    asciiHeaderValue("a metadata value"),
  )
  .refine(
    (m) => Object.entries(m).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0) <= 2048,
    "metadata is at most 2 KB in all (S3's limit)",
  )
  .describe('e.g. {"author": "ana"}; ≤ 2 KB.');

/**
 * Encryption at rest a write asks for, over the store's default (STORE_SSE…); sse_kms_key_id alone means aws:kms.
 * Undescribed: the names and values say it, and every write tool carries them (the tool list's budget).
 */
export const encryptionArgs = {
  sse: z.enum(SSE_ALGORITHMS).optional(),
  sse_kms_key_id: asciiHeaderValue("sse_kms_key_id").optional(),
};

/** The encryption a call's sse arguments ask for, or undefined: the store's default holds. */
export function callEncryption(args: { sse?: SseAlgorithm; sse_kms_key_id?: string }): WriteEncryption | undefined {
  if (!args.sse && !args.sse_kms_key_id) return undefined;
  const sse = args.sse ?? "aws:kms";
  if (!args.sse_kms_key_id) return { sse };
  if (sse === "AES256")
    throw new ActionableError({
      resource: "sse_kms_key_id",
      code: "InvalidArgument",
      message: "sse_kms_key_id names a KMS key, which sse AES256 (SSE-S3, the store's own keys) does not use.",
      hint: 'call again with sse "aws:kms" to use that key, or without sse_kms_key_id.',
    });
  return { sse, kmsKeyId: args.sse_kms_key_id };
}

export const ifAbsent = z.boolean().describe("Never replace an object.");

/** A file inside an archive object (inspect_object, get_object). */
export const archiveMember = z.string().min(1).max(4096).describe('A zip or tar member, e.g. "data/a.csv".');
