import type { S3Client } from "@aws-sdk/client-s3";
import type { Config } from "../config.ts";

export type S3Sdk = typeof import("@aws-sdk/client-s3");

/** The S3 client plus the SDK module it came from (commands are classes in it). */
export interface S3Handle {
  client: S3Client;
  sdk: S3Sdk;
}

/**
 * Returns a memoized getter for the one S3 client. The AWS SDK is imported on
 * first use, not at start-up: loading it is most of a cold start, and
 * initialize/tools/list never need it.
 */
export function lazyS3Client(config: Config): () => Promise<S3Handle> {
  let pending: Promise<S3Handle> | undefined;
  return () => {
    pending ??= buildClient(config).catch((err: unknown) => {
      pending = undefined; // let a later call try again
      throw err;
    });
    return pending;
  };
}

async function buildClient(config: Config): Promise<S3Handle> {
  const [sdk, { NodeHttpHandler }] = await Promise.all([
    import("@aws-sdk/client-s3"),
    import("@smithy/node-http-handler"),
  ]);
  const client = new sdk.S3Client({
    region: config.region,
    ...(config.endpointUrl ? { endpoint: config.endpointUrl } : {}),
    ...(config.credentials ? { credentials: config.credentials } : {}),
    forcePathStyle: config.forcePathStyle,
    // Non-AWS servers reject or silently corrupt aws-chunked bodies with trailing
    // checksums (FACTS.md), so with a custom endpoint we only checksum when S3 requires it.
    requestChecksumCalculation: config.checksums,
    responseChecksumValidation: config.checksums,
    maxAttempts: config.maxAttempts,
    retryMode: "standard",
    requestHandler: new NodeHttpHandler({
      connectionTimeout: config.connectTimeoutMs,
      // Idle time on an open socket, not a cap on a whole (possibly huge) transfer.
      socketTimeout: config.requestTimeoutMs,
      httpAgent: { keepAlive: true, maxSockets: 16 },
      httpsAgent: { keepAlive: true, maxSockets: 16 },
    }),
  });
  return { client, sdk };
}
