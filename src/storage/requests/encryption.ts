/**
 * A store's write encryption (config/encryption-config.ts) on every request
 * that creates an object: the SDK's PutObject, CreateMultipartUpload and
 * CopyObject get it as input (a middleware, so no write path can miss it),
 * and the signed requests of our own quick paths as headers. A call's own
 * choice, when it makes one, is left as it is. UploadPart needs nothing: the
 * upload's encryption is set when it is created.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import type { WriteEncryption } from "../../config/encryption-config.ts";

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

/** The same as headers of a signed request that creates an object. */
export function encryptionHeaders(encryption: WriteEncryption | undefined): Record<string, string> {
  if (!encryption) return {};
  return {
    "x-amz-server-side-encryption": encryption.sse,
    ...(encryption.kmsKeyId ? { "x-amz-server-side-encryption-aws-kms-key-id": encryption.kmsKeyId } : {}),
  };
}
