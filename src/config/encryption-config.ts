/**
 * How a store's writes are encrypted at rest when the call does not say:
 * STORE_SSE (AES256, aws:kms or aws:kms:dsse) and STORE_SSE_KMS_KEY_ID (a KMS
 * key id, ARN or alias; only with aws:kms*), and the same per store
 * (STORE_<NAME>_SSE…). Every PutObject, CreateMultipartUpload and CopyObject
 * the store's client sends carries them (storage/requests/encryption.ts), so a
 * bucket whose policy refuses unencrypted writes accepts every write.
 */
export const SSE_ALGORITHMS = ["AES256", "aws:kms", "aws:kms:dsse"] as const;
export type SseAlgorithm = (typeof SSE_ALGORITHMS)[number];

export interface WriteEncryption {
  sse: SseAlgorithm;
  /** The KMS key (id, ARN or alias); absent: the store's default KMS key. */
  kmsKeyId?: string;
}

/** The encryption two variables ask for, or undefined when neither is set; problems go to `errors`. */
export function readEncryption(
  sseRaw: string | undefined,
  keyRaw: string | undefined,
  names: { sse: string; key: string },
  errors: string[],
): WriteEncryption | undefined {
  const sse = sseRaw?.trim();
  const kmsKeyId = keyRaw?.trim() || undefined;
  if (!sse) {
    if (kmsKeyId) errors.push(`${names.key} is set without ${names.sse}: set ${names.sse}=aws:kms to use the key.`);
    return undefined;
  }
  const algorithm = SSE_ALGORITHMS.find((a) => a.toLowerCase() === sse.toLowerCase());
  if (!algorithm) {
    errors.push(`${names.sse}: "${sse}" must be one of ${SSE_ALGORITHMS.join(", ")}.`);
    return undefined;
  }
  if (kmsKeyId && algorithm === "AES256") {
    errors.push(`${names.key} names a KMS key, which AES256 (SSE-S3) does not use: set ${names.sse}=aws:kms.`);
    return undefined;
  }
  return { sse: algorithm, ...(kmsKeyId ? { kmsKeyId } : {}) };
}
