import type { S3Client } from "@aws-sdk/client-s3";
import type { Config } from "../../config/config.ts";
import type { CustomerKey, WriteEncryption } from "../../config/encryption-config.ts";
import { quirksOf, type StoreQuirks } from "../quirks.ts";
import { encryptWrites, withCustomerKey } from "./encryption.ts";
import { guardClient } from "./guards.ts";
import { signUploadsWithoutPayloadHash } from "./payload-hash.ts";
import { countedBody } from "./sent-bytes.ts";
import { storedBytes } from "./stored-bytes.ts";

export type S3Sdk = typeof import("@aws-sdk/client-s3");

/** The S3 clients plus the SDK module they came from (commands are classes in it). */
export interface S3Handle {
  client: S3Client;
  /**
   * Bun's fetch, for the bytes of objects both ways: request bodies we hold
   * in memory (PutObject, UploadPart) and download GETs: faster and with a
   * lower peak than node:http (the transfer shapes of `npm run bench`). Its requestTimeout bounds the wait
   * for an answer's headers; a download's body has an idle timer of its own
   * (ranged.ts). Everything else goes through `client`.
   */
  fetchClient: S3Client;
  /**
   * Only signs presigned URLs (no connection is opened). Never adds flexible
   * checksums: a URL signed with an x-amz-checksum for an empty body would
   * refuse the upload a person makes with it.
   */
  presignClient: S3Client;
  sdk: S3Sdk;
  /** The store's write encryption, for the signed requests of the quick paths (the clients add it themselves). */
  encryption?: WriteEncryption;
  /** The store's SSE-C key, for the signed requests of the quick paths (the clients add it themselves). */
  customerKey?: CustomerKey;
  /** What this store does differently (quirks.ts), from its provider. */
  quirks: StoreQuirks;
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
  const [sdk, { NodeHttpHandler }, { FetchHttpHandler }] = await Promise.all([
    import("@aws-sdk/client-s3"),
    import("@smithy/node-http-handler"),
    import("@smithy/fetch-http-handler"),
  ]);
  const options = {
    region: config.region,
    ...(config.endpointUrl ? { endpoint: config.endpointUrl } : {}),
    ...(config.credentialProvider
      ? { credentials: config.credentialProvider }
      : config.credentials
        ? { credentials: config.credentials }
        : {}),
    // A profile store: the SDK resolves its credentials from the profile (keys, SSO, assume-role, credential_process).
    ...(config.profile ? { profile: config.profile } : {}),
    forcePathStyle: config.forcePathStyle,
    // Non-AWS servers reject or silently corrupt aws-chunked bodies with trailing
    // checksums (docs/configuration.md, STORE_CHECKSUMS), so with a custom endpoint we only checksum when S3 requires it.
    requestChecksumCalculation: config.checksums,
    responseChecksumValidation: config.checksums,
    maxAttempts: config.maxAttempts,
    retryMode: "standard",
  } as const;
  const client = new sdk.S3Client({
    ...options,
    requestHandler: new NodeHttpHandler({
      connectionTimeout: config.connectTimeoutMs,
      // Idle time on an open socket, not a cap on a whole (possibly huge) transfer.
      socketTimeout: config.requestTimeoutMs,
      // Throw (not just warn) when a per-request time to first byte runs out (see deadline.ts).
      throwOnRequestTimeout: true,
      // No queue for a free socket: a wait there would be reported as an unreachable endpoint.
      httpAgent: { keepAlive: true, maxSockets: Infinity },
      httpsAgent: { keepAlive: true, maxSockets: Infinity },
    }),
  });
  const fetchClient = new sdk.S3Client({
    ...options,
    // A whole-request limit here, but each request carries one part (5 MiB by default).
    // Bun's fetch inflates a Content-Encoding: gzip body unless told not to (an option of fetch, not of Request): an
    // object stored that way is downloaded as stored.
    requestHandler: new FetchHttpHandler({
      requestTimeout: Math.max(config.requestTimeoutMs, config.connectTimeoutMs),
      customFetch: storedBytes as typeof fetch,
      // An upload's part registered for progress goes as a counted stream of the same bytes (sent-bytes.ts).
      requestInit: countedBody as never,
    }),
  });
  const presignClient = new sdk.S3Client({
    ...options,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  guardClient(client);
  guardClient(fetchClient);
  signUploadsWithoutPayloadHash(client);
  signUploadsWithoutPayloadHash(fetchClient);
  encryptWrites(client, config.encryption);
  encryptWrites(fetchClient, config.encryption);
  withCustomerKey(client, config.customerKey);
  withCustomerKey(fetchClient, config.customerKey);
  return {
    client,
    fetchClient,
    presignClient,
    sdk,
    quirks: quirksOf(config.provider),
    ...(config.encryption ? { encryption: config.encryption } : {}),
    ...(config.customerKey ? { customerKey: config.customerKey } : {}),
  };
}

/**
 * The fetch-based client, except for keys with "." or ".." path segments,
 * which fetch's URL parsing would collapse (sending a different path than was
 * signed, or than was meant).
 */
export function fetchClientFor({ client, fetchClient }: S3Handle, key: string): S3Client {
  return /(^|\/)\.\.?(\/|$)/.test(key) ? client : fetchClient;
}
