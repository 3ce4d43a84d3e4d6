/**
 * Which S3 implementation a store is, for what it does differently
 * (storage/quirks.ts): the operator's word (STORE_PROVIDER, or a named
 * store's STORE_<NAME>_PROVIDER), else its endpoint's host (AWS without an
 * endpoint or at amazonaws.com, Cloudflare R2, Backblaze B2), else "other":
 * a store nothing is assumed of, every tolerance on. A Ceph or MinIO endpoint
 * on a host of your own says nothing: `doctor` names what the store's
 * answer says it is, and which setting to give.
 */
export const PROVIDERS = ["aws", "ceph", "minio", "r2", "b2", "other"] as const;
export type StoreProvider = (typeof PROVIDERS)[number];

export function readProvider(
  given: string | undefined,
  endpointUrl: string | undefined,
  errors: string[],
  variable: string,
): StoreProvider {
  const named = given?.trim().toLowerCase();
  if (named) {
    if ((PROVIDERS as readonly string[]).includes(named)) return named as StoreProvider;
    errors.push(`${variable}: "${given}" must be one of ${PROVIDERS.join(", ")}.`);
  }
  return providerOfEndpoint(endpointUrl);
}

/** What an endpoint's host says; "other" when it says nothing. */
export function providerOfEndpoint(endpointUrl: string | undefined): StoreProvider {
  if (endpointUrl === undefined) return "aws";
  let host: string;
  try {
    host = new URL(endpointUrl).hostname.toLowerCase();
  } catch {
    return "other";
  }
  if (host === "amazonaws.com" || host.endsWith(".amazonaws.com")) return "aws";
  if (host.endsWith(".r2.cloudflarestorage.com")) return "r2";
  if (host.endsWith(".backblazeb2.com")) return "b2";
  return "other";
}

/**
 * How a store is addressed and checksummed unless the operator says
 * otherwise: AWS by virtual host with the SDK's flexible checksums; any other
 * endpoint by path, checksums only where S3 requires them (non-AWS servers
 * reject or corrupt aws-chunked bodies: docs/configuration.md, STORE_CHECKSUMS).
 */
export function connectionDefaults(endpointUrl: string | undefined): {
  forcePathStyle: boolean;
  checksums: "WHEN_REQUIRED" | "WHEN_SUPPORTED";
} {
  const custom = endpointUrl !== undefined;
  return { forcePathStyle: custom, checksums: custom ? "WHEN_REQUIRED" : "WHEN_SUPPORTED" };
}
