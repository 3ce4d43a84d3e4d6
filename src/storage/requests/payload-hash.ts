/**
 * Uploads are signed without a SHA-256 of their body. Every PutObject and
 * UploadPart we send carries Content-MD5, which is signed and which the store
 * checks against the bytes it receives (refusing the request otherwise), and
 * we check the returned ETag as well (upload.ts). The SDK's default
 * (x-amz-content-sha256 = the body's SHA-256) would add a second full pass
 * over every byte sent for no guarantee the MD5 does not already give: the
 * AWS CLI signs uploads the same way over HTTPS. Over plain HTTP a body
 * changed in transit still fails the store's MD5 check. (The streamed parts
 * of a copy between stores go without Content-MD5, also unsigned, and are
 * checked by their ETags instead: streamed-parts.ts.)
 */
import type { S3Client } from "@aws-sdk/client-s3";

const UPLOADS = new Set(["PutObjectCommand", "UploadPartCommand"]);

export function signUploadsWithoutPayloadHash(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ContentMD5?: string };
      const request = args.request as { headers?: Record<string, string> } | undefined;
      // The signer uses a payload hash header already present instead of hashing the body.
      if (
        input.ContentMD5 &&
        request?.headers &&
        UPLOADS.has((context as { commandName?: string }).commandName ?? "")
      ) {
        request.headers["x-amz-content-sha256"] = "UNSIGNED-PAYLOAD";
      }
      return next(args);
    },
    { step: "build", name: "storeMcpUnsignedPayload" },
  );
}
