/**
 * A store's write encryption (config/encryption-config.ts) on every request
 * that creates an object: the SDK's PutObject, CreateMultipartUpload and
 * CopyObject get it as input (a middleware, so no write path can miss it),
 * and the signed requests of our own quick paths as headers. A call's own
 * choice, when it makes one, is left as it is. UploadPart needs nothing: the
 * upload's encryption is set when it is created.
 *
 * A store's SSE-C key goes the same two ways, on every request for an
 * object's bytes (parts and a copy's source included): S3 keeps no customer
 * key, so each read and write must carry it.
 */
import type { S3Client, ServerSideEncryption } from "@aws-sdk/client-s3";
import type { CustomerKey, WriteEncryption } from "../../config/encryption-config.ts";
import { ActionableError } from "../../runtime/errors.ts";

const CREATES = new Set(["PutObjectCommand", "CreateMultipartUploadCommand", "CopyObjectCommand"]);

type EncryptedInput = { ServerSideEncryption?: string; SSEKMSKeyId?: string };

export function encryptWrites(client: S3Client, encryption: WriteEncryption | undefined): void {
  if (!encryption) return;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as EncryptedInput;
      if (!CREATES.has((context as { commandName?: string }).commandName ?? "") || input.ServerSideEncryption)
        return next(args);
      const encrypted: EncryptedInput = { ...input, ServerSideEncryption: encryption.sse };
      if (encryption.kmsKeyId) encrypted.SSEKMSKeyId = encryption.kmsKeyId;
      return next({ ...args, input: encrypted as typeof args.input });
    },
    { step: "initialize", name: "storeMcpEncryptWrites" },
  );
}

/** A call's own encryption as the SDK's input of a request that creates an object (the middleware then leaves it). */
export function encryptionParams(encryption: WriteEncryption | undefined): {
  ServerSideEncryption?: ServerSideEncryption;
  SSEKMSKeyId?: string;
} {
  if (!encryption) return {};
  return encryption.kmsKeyId
    ? { ServerSideEncryption: encryption.sse, SSEKMSKeyId: encryption.kmsKeyId }
    : { ServerSideEncryption: encryption.sse };
}

/** The same as headers of a signed request that creates an object. */
export function encryptionHeaders(encryption: WriteEncryption | undefined): Record<string, string> {
  if (!encryption) return {};
  return {
    "x-amz-server-side-encryption": encryption.sse,
    ...(encryption.kmsKeyId ? { "x-amz-server-side-encryption-aws-kms-key-id": encryption.kmsKeyId } : {}),
  };
}

/** The SDK commands that read or write an object's bytes: each carries a store's SSE-C key. */
const KEYED = new Set([
  "GetObjectCommand",
  "HeadObjectCommand",
  "PutObjectCommand",
  "CreateMultipartUploadCommand",
  "UploadPartCommand",
  "CopyObjectCommand",
  "UploadPartCopyCommand",
]);
/** Of those, the ones whose source is an object of the same store (encrypted with the same key). */
const COPIES = new Set(["CopyObjectCommand", "UploadPartCopyCommand"]);

/**
 * A store's SSE-C key on every SDK request that reads or writes an object's bytes (and a copy's source), before the
 * SDK's own SSE-C step computes the key's MD5. A write that asks for another encryption (a call's sse) is refused:
 * S3 takes one or the other.
 */
export function withCustomerKey(client: S3Client, key: CustomerKey | undefined): void {
  if (!key) return;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context as { commandName?: string }).commandName ?? "";
      if (!KEYED.has(command)) return next(args);
      const input = args.input as Record<string, unknown>;
      if (input.ServerSideEncryption)
        throw new ActionableError({
          resource: "sse",
          code: "InvalidArgument",
          message:
            "This store encrypts every object with the server's customer key (SSE-C), so a write cannot ask for another encryption.",
          hint: "call again without sse and sse_kms_key_id.",
        });
      const keyed: Record<string, unknown> = { ...input, SSECustomerAlgorithm: "AES256", SSECustomerKey: key.base64() };
      if (COPIES.has(command))
        Object.assign(keyed, { CopySourceSSECustomerAlgorithm: "AES256", CopySourceSSECustomerKey: key.base64() });
      return next({ ...args, input: keyed as typeof args.input });
    },
    { step: "initialize", priority: "high", name: "storeMcpCustomerKey" },
  );
}

/** The same as headers of a signed request for an object's bytes (GET, HEAD, PUT of an object or part; a copy's source too). */
export function customerKeyHeaders(
  key: CustomerKey | undefined,
  req: { method: string; key?: string; headers?: Record<string, string> },
): Record<string, string> {
  if (!key || req.key === undefined || !["GET", "HEAD", "PUT"].includes(req.method)) return {};
  const own = {
    "x-amz-server-side-encryption-customer-algorithm": "AES256",
    "x-amz-server-side-encryption-customer-key": key.base64(),
    "x-amz-server-side-encryption-customer-key-md5": key.md5,
  };
  if (!req.headers?.["x-amz-copy-source"]) return own;
  return {
    ...own,
    "x-amz-copy-source-server-side-encryption-customer-algorithm": "AES256",
    "x-amz-copy-source-server-side-encryption-customer-key": key.base64(),
    "x-amz-copy-source-server-side-encryption-customer-key-md5": key.md5,
  };
}
