/**
 * The store itself, with the configured credentials: which credentials won,
 * whether they may list buckets, each bucket's reachability and region,
 * and which addressing style works. The write round trip (only when asked)
 * is write-checks.ts.
 */

import { isIP } from "node:net";
import type { S3Client } from "@aws-sdk/client-s3";
import type { ChecksumMode, Config } from "../config/config.ts";
import { redactKeyId } from "../config/config-description.ts";
import { scrubSecrets } from "../runtime/redact.ts";
import { lazyS3Client, type S3Handle } from "../storage/requests/client.ts";
import { startDeadline } from "../storage/requests/deadline.ts";
import type { Check } from "./report.ts";

export type Sdk = typeof import("@aws-sdk/client-s3");
type SdkError = {
  name?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string> };
};

/** Every request of a diagnosis ends by then: a store that never answers, or trickles, cannot hang the doctor. */
export const REQUEST_DEADLINE_MS = 15_000;

export const codeOf = (err: unknown) => {
  const e = err as SdkError;
  if (e.name === "AbortError" || e.name === "TimeoutError") return `no answer within ${REQUEST_DEADLINE_MS / 1000} s`;
  const code = e.Code ?? e.name ?? "UnknownError";
  return code === "UnknownError" || code === "Unknown" ? `HTTP ${e.$metadata?.httpStatusCode ?? "?"}` : code;
};
export const statusOf = (err: unknown) => (err as SdkError).$metadata?.httpStatusCode;

export interface StoreProbe {
  sdk: Sdk;
  /** The server's own S3 client (storage/client.ts: same guards and credential scrubbing), built for a diagnosis. */
  client(overrides?: { forcePathStyle?: boolean; checksums?: ChecksumMode }): Promise<S3Client>;
}

export async function storeProbe(config: Config): Promise<StoreProbe> {
  // A diagnosis answers at once: one attempt each, short timeouts.
  const base: Config = { ...config, maxAttempts: 1, connectTimeoutMs: 5_000, requestTimeoutMs: 10_000 };
  const built = new Map<string, Promise<S3Handle>>();
  const handle = (overrides: Partial<Config>) => {
    const key = JSON.stringify(overrides);
    if (!built.has(key)) built.set(key, lazyS3Client({ ...base, ...overrides })());
    return built.get(key)!;
  };
  const { sdk } = await handle({});
  return { sdk, client: async (overrides = {}) => withDeadlines((await handle(overrides)).client) };
}

/** The client, with a deadline on each send (which rejects then even if the SDK would keep reading a trickle). */
function withDeadlines(client: S3Client): S3Client {
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== "send") return Reflect.get(target, prop, receiver);
      return async (command: Parameters<S3Client["send"]>[0], options: { abortSignal?: AbortSignal } = {}) => {
        const deadline = startDeadline(REQUEST_DEADLINE_MS, 1, options.abortSignal);
        try {
          return await deadline.race(target.send(command, { ...options, abortSignal: deadline.signal }));
        } finally {
          deadline.dispose();
        }
      };
    },
  });
}

/** Which credential source won (the key id's last four characters only). */
export async function credentialSourceCheck(config: Config, probe: StoreProbe): Promise<Check> {
  if (config.credentials)
    return {
      name: "credentials source",
      status: "ok",
      detail: `${config.credentialSource}, key ${redactKeyId(config.credentials.accessKeyId)}`,
    };
  try {
    const identity = await (await probe.client()).config.credentials();
    return {
      name: "credentials source",
      status: "ok",
      detail: `AWS default chain, key ${redactKeyId(identity.accessKeyId)}${identity.sessionToken ? " (temporary)" : ""}`,
    };
  } catch (err) {
    return {
      name: "credentials source",
      status: "fail",
      detail: `no credentials found (${scrubSecrets(String((err as Error).message)).slice(0, 160)})`,
      fix: "set STORE_ACCESS_KEY_ID and STORE_SECRET_ACCESS_KEY, or an AWS profile / role",
    };
  }
}

const CREDENTIAL_FIXES: Record<string, string> = {
  InvalidAccessKeyId:
    "the key id is unknown to this endpoint: check STORE_ACCESS_KEY_ID, and that STORE_ENDPOINT_URL is the store the key belongs to",
  SignatureDoesNotMatch:
    "the secret does not match the key id (or the region is wrong): check STORE_SECRET_ACCESS_KEY and STORE_REGION",
  RequestTimeTooSkewed: "this machine's clock is too far from the store's: sync it",
  ExpiredToken: "the temporary credentials have expired: refresh them (aws sso login, a new STORE_SESSION_TOKEN)",
  InvalidToken: "the session token is not valid: refresh STORE_SESSION_TOKEN or leave it out",
};

/** ListBuckets: the buckets these credentials see, or why not. */
export async function listBucketsCheck(
  config: Config,
  probe: StoreProbe,
): Promise<{ check: Check; buckets: string[] }> {
  try {
    const out = await (await probe.client()).send(new probe.sdk.ListBucketsCommand({ MaxBuckets: 1000 }));
    const names = (out.Buckets ?? []).map((b) => b.Name ?? "");
    return {
      check: {
        name: "list buckets",
        status: "ok",
        detail: `${names.length} bucket(s) visible${names.length ? `: ${names.slice(0, 5).join(", ")}${names.length > 5 ? ", …" : ""}` : ""}`,
      },
      buckets: names,
    };
  } catch (err) {
    const code = codeOf(err);
    if (code === "AccessDenied" || (statusOf(err) === 403 && !CREDENTIAL_FIXES[code])) {
      // A least-privilege key (scoped to some buckets) is a good key: a note, not a failure.
      const named = config.buckets.length > 0;
      return {
        check: {
          name: "list buckets",
          status: "warn",
          detail: `AccessDenied: these credentials may not list buckets (a key scoped to some buckets cannot); every other tool works on a bucket named directly`,
          fix: named
            ? "list_buckets answers with the --bucket names that exist (checked below)"
            : "name the buckets the key may use with --bucket NAME (or STORE_BUCKETS) so list_buckets, completions and these checks use them",
        },
        buckets: [],
      };
    }
    return {
      check: {
        name: "list buckets",
        status: "fail",
        detail: `${code}: ${scrubSecrets(String((err as Error).message)).slice(0, 200)}`,
        fix: CREDENTIAL_FIXES[code] ?? "see the code above; the README's Troubleshooting table lists the common ones",
      },
      buckets: [],
    };
  }
}

/** HeadBucket (and the bucket's real region), then a one-key listing. */
export async function bucketChecks(
  config: Config,
  probe: StoreProbe,
  bucket: string,
): Promise<{ checks: Check[]; usable: boolean }> {
  const client = await probe.client();
  try {
    const head = await client.send(new probe.sdk.HeadBucketCommand({ Bucket: bucket }));
    const region = head.BucketRegion;
    const checks: Check[] = [];
    if (region && region !== config.region && !config.endpointUrl) {
      checks.push({
        name: `bucket ${bucket}`,
        status: "warn",
        detail: `exists, in region ${region} (configured: ${config.region})`,
        fix: `set STORE_REGION=${region}`,
      });
    } else {
      checks.push({ name: `bucket ${bucket}`, status: "ok", detail: `reachable${region ? `, region ${region}` : ""}` });
    }
    try {
      const page = await client.send(new probe.sdk.ListObjectsV2Command({ Bucket: bucket, MaxKeys: 1 }));
      checks.push({
        name: `list ${bucket}`,
        status: "ok",
        detail: page.KeyCount ? "listing works (1 key read)" : "listing works (empty bucket)",
      });
    } catch (err) {
      checks.push({
        name: `list ${bucket}`,
        status: "fail",
        detail: `${codeOf(err)} listing the bucket`,
        fix: "the key may read the bucket but not list it: grant s3:ListBucket on it",
      });
    }
    return { checks, usable: true };
  } catch (err) {
    const status = statusOf(err);
    const region = (err as SdkError).$response?.headers?.["x-amz-bucket-region"];
    if (status === 301 || codeOf(err) === "PermanentRedirect") {
      return {
        checks: [
          {
            name: `bucket ${bucket}`,
            status: "fail",
            detail: `lives in another region${region ? `: ${region}` : ""}`,
            fix: `set STORE_REGION=${region ?? "<the bucket's region>"}`,
          },
        ],
        usable: false,
      };
    }
    if (status === 404)
      return {
        checks: [
          {
            name: `bucket ${bucket}`,
            status: "fail",
            detail: "NoSuchBucket",
            fix: "check the name (list_buckets shows the buckets the key sees)",
          },
        ],
        usable: false,
      };
    if (status === 403)
      return {
        checks: [
          {
            name: `bucket ${bucket}`,
            status: "fail",
            detail: "AccessDenied",
            fix: "grant these credentials access to the bucket, or use another key",
          },
        ],
        usable: false,
      };
    return {
      checks: [
        {
          name: `bucket ${bucket}`,
          status: "fail",
          detail: `${codeOf(err)}`,
          fix: "see the code; the README's Troubleshooting table lists the common ones",
        },
      ],
      usable: false,
    };
  }
}

/** Path-style and virtual-hosted addressing against one bucket: which works, and whether the configured one does. */
export async function addressingCheck(config: Config, probe: StoreProbe, bucket: string): Promise<Check> {
  const works = async (forcePathStyle: boolean) =>
    (await probe.client({ forcePathStyle }))
      .send(new probe.sdk.ListObjectsV2Command({ Bucket: bucket, MaxKeys: 1 }))
      .then(
        () => true,
        () => false,
      );
  // An IP address cannot carry a bucket name: the SDK then uses paths whatever it is told.
  if (config.endpointUrl && isIP(new URL(config.endpointUrl).hostname.replace(/^\[|\]$/g, ""))) {
    const path = await works(true);
    return path
      ? {
          name: "addressing",
          status: "ok",
          detail: "path-style works (an IP endpoint: virtual-hosted addressing is not possible)",
        }
      : {
          name: "addressing",
          status: "fail",
          detail: "path-style fails against this IP endpoint",
          fix: "see the bucket checks above",
        };
  }
  const [path, virtual] = await Promise.all([works(true), works(false)]);
  const configured = config.forcePathStyle ? "path-style" : "virtual-hosted";
  const detail = `path-style ${path ? "works" : "fails"}, virtual-hosted ${virtual ? "works" : "fails"} (configured: ${configured})`;
  if ((config.forcePathStyle && path) || (!config.forcePathStyle && virtual))
    return { name: "addressing", status: "ok", detail };
  if (path || virtual) return { name: "addressing", status: "fail", detail, fix: `set STORE_FORCE_PATH_STYLE=${path}` };
  return {
    name: "addressing",
    status: "fail",
    detail,
    fix: "neither style reaches the bucket: see the bucket checks above",
  };
}
