import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { registerSecrets } from "../runtime/redact.ts";
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

/**
 * A store's SSE-C key (STORE_SSE_C_KEY: base64 of 32 bytes; or STORE_SSE_C_KEY_FILE: a file holding the 32 bytes,
 * raw or base64; per store STORE_<NAME>_SSE_C_KEY…). Only from the server's configuration, never a tool argument: a key
 * in a call would land in the model's context and the audit log. Every request that reads or writes an object's
 * bytes carries it (storage/requests/encryption.ts). It never prints: JSON and inspection show it redacted.
 */
export class CustomerKey {
  readonly #key: Uint8Array;
  /** The key's MD5, base64 (x-amz-server-side-encryption-customer-key-MD5). */
  readonly md5: string;
  constructor(key: Uint8Array) {
    this.#key = key;
    this.md5 = createHash("md5").update(key).digest("base64");
  }
  /** The key, base64 (x-amz-server-side-encryption-customer-key). */
  base64(): string {
    return Buffer.from(this.#key).toString("base64");
  }
  toJSON(): string {
    return "[SSE-C key]";
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "[SSE-C key]";
  }
}

/** The customer key two variables give (the key, or a file with it), or undefined when neither is set; problems go to `errors`. */
export function readCustomerKey(
  raw: string | undefined,
  file: string | undefined,
  names: { key: string; file: string },
  errors: string[],
): CustomerKey | undefined {
  const inline = raw?.trim();
  const path = file?.trim();
  if (!inline && !path) return undefined;
  if (inline && path) {
    errors.push(`${names.key} and ${names.file} are both set: give the key one way.`);
    return undefined;
  }
  let bytes: Uint8Array;
  if (path) {
    try {
      const content = readFileSync(path);
      bytes = content.length === 32 ? content : Buffer.from(content.toString("utf8").trim(), "base64");
    } catch (err) {
      errors.push(`${names.file}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? "error"}).`);
      return undefined;
    }
  } else bytes = Buffer.from(inline!, "base64");
  if (bytes.length !== 32) {
    errors.push(
      `${path ? names.file : names.key}: an SSE-C key is 32 bytes (AES-256)${path ? ", raw or base64" : ", as base64"}, e.g. from \`openssl rand -base64 32\`.`,
    );
    return undefined;
  }
  const key = new CustomerKey(bytes);
  // Also as sent (base64), whichever way it was given: no log line or error may show it.
  registerSecrets(key.base64());
  return key;
}

export type EncryptionVariable = "SSE" | "SSE_KMS_KEY_ID" | "SSE_C_KEY" | "SSE_C_KEY_FILE";

/**
 * A store's encryption settings, from its variables (`name` spells each one: STORE_SSE, or STORE_<NAME>_SSE…):
 * its write encryption and its SSE-C key, which exclude each other.
 */
export function readStoreEncryption(
  value: (variable: EncryptionVariable) => string | undefined,
  name: (variable: EncryptionVariable) => string,
  errors: string[],
): { encryption?: WriteEncryption; customerKey?: CustomerKey } {
  const encryption = readEncryption(
    value("SSE"),
    value("SSE_KMS_KEY_ID"),
    { sse: name("SSE"), key: name("SSE_KMS_KEY_ID") },
    errors,
  );
  const customerKey = readCustomerKey(
    value("SSE_C_KEY"),
    value("SSE_C_KEY_FILE"),
    { key: name("SSE_C_KEY"), file: name("SSE_C_KEY_FILE") },
    errors,
  );
  if (encryption && customerKey)
    errors.push(
      `${name("SSE")} and ${name("SSE_C_KEY")} are both set: a store encrypts with its own keys or a customer key, not both.`,
    );
  return { ...(encryption ? { encryption } : {}), ...(customerKey ? { customerKey } : {}) };
}
