/**
 * The store itself, with the configured credentials: which credentials won,
 * whether they may list buckets, each bucket's reachability and region,
 * which addressing style works, and (only when asked) a write round trip in
 * the configured checksum mode and in the AWS SDK's default one.
 */

import { randomBytes } from "node:crypto";
import { isIP } from "node:net";
import type { S3Client } from "@aws-sdk/client-s3";
import { type ChecksumMode, type Config, redactKeyId } from "../config/config.ts";
import { scrubSecrets } from "../runtime/redact.ts";
import { lazyS3Client, type S3Handle } from "../storage/requests/client.ts";
import { startDeadline } from "../storage/requests/deadline.ts";
import type { Check } from "./report.ts";

type Sdk = typeof import("@aws-sdk/client-s3");
type SdkError = {
  name?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string> };
};

/** Every request of a diagnosis ends by then: a store that never answers, or trickles, cannot hang the doctor. */
export const REQUEST_DEADLINE_MS = 15_000;

const codeOf = (err: unknown) => {
  const e = err as SdkError;
  if (e.name === "AbortError" || e.name === "TimeoutError") return `no answer within ${REQUEST_DEADLINE_MS / 1000} s`;
  const code = e.Code ?? e.name ?? "UnknownError";
  return code === "UnknownError" || code === "Unknown" ? `HTTP ${e.$metadata?.httpStatusCode ?? "?"}` : code;
};
const statusOf = (err: unknown) => (err as SdkError).$metadata?.httpStatusCode;

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

interface RoundTrip {
  ok: boolean;
  detail: string;
  /** The test object, when it may still be in the bucket, and why. */
  leftBehind?: { key: string; why: string };
}

/** Put, get and delete a tiny object in `mode`; true when the store took it and gave it back intact. Whether it is really gone is checked, not assumed. */
async function roundTrip(probe: StoreProbe, bucket: string, mode: ChecksumMode): Promise<RoundTrip> {
  const client = await probe.client({ checksums: mode });
  const key = `.store-mcp-doctor/${randomBytes(8).toString("hex")}`;
  const body = `store-mcp-server doctor ${new Date().toISOString()}`;
  // Whether the object may exist: a PUT the store refused (an HTTP answer) wrote nothing; one that timed out may have.
  let written = false;
  let result: { ok: boolean; detail: string };
  try {
    written = true;
    await client
      .send(
        new probe.sdk.PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: Buffer.from(body),
          ContentType: "text/plain",
        }),
      )
      .catch((err: unknown) => {
        if (statusOf(err) !== undefined) written = false;
        throw err;
      });
    const got = await client.send(new probe.sdk.GetObjectCommand({ Bucket: bucket, Key: key }));
    const text = await got.Body?.transformToString();
    result =
      text === body
        ? { ok: true, detail: "put, get and delete work" }
        : {
            ok: false,
            detail: `the object came back different (${text?.length ?? 0} bytes instead of ${body.length}): the store mangles what it receives`,
          };
  } catch (err) {
    result = { ok: false, detail: `${codeOf(err)} (HTTP ${statusOf(err) ?? "?"})` };
  }
  if (!written) return result;
  const why = await removeTestObject(client, probe.sdk, bucket, key);
  return why
    ? {
        ...result,
        ok: false,
        ...(result.ok ? { detail: "put and get work, delete does not" } : {}),
        leftBehind: { key, why },
      }
    : result;
}

/** Deletes the test object and makes sure it is gone; why it may not be, or undefined. */
async function removeTestObject(client: S3Client, sdk: Sdk, bucket: string, key: string): Promise<string | undefined> {
  try {
    await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key }));
  } catch (err) {
    return `its DELETE failed: ${codeOf(err)} (HTTP ${statusOf(err) ?? "?"})`;
  }
  try {
    await client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }));
    return "it is still there after its DELETE was answered";
  } catch (err) {
    return statusOf(err) === 404
      ? undefined
      : `whether it is gone could not be checked: ${codeOf(err)} (HTTP ${statusOf(err) ?? "?"})`;
  }
}

/** A failed check naming each test object that may be left, and how to remove it. */
function leftBehindChecks(bucket: string, trips: RoundTrip[]): Check[] {
  return trips.flatMap((t) =>
    t.leftBehind
      ? [
          {
            name: "write test clean-up",
            status: "fail" as const,
            detail: `left s3://${bucket}/${t.leftBehind.key} behind: ${t.leftBehind.why}`,
            fix: `delete it (aws s3 rm "s3://${bucket}/${t.leftBehind.key}") and allow these credentials s3:DeleteObject`,
          },
        ]
      : [],
  );
}

/** --write-test: the configured checksum mode, then the SDK's default, with a recommendation for STORE_CHECKSUMS; any test object left behind is a failure, named. */
export async function writeChecks(config: Config, probe: StoreProbe, bucket: string): Promise<Check[]> {
  const mode = config.checksums.toLowerCase();
  const configured = await roundTrip(probe, bucket, config.checksums);
  const checks: Check[] = [
    configured.ok
      ? { name: `write test (${mode})`, status: "ok", detail: `${configured.detail} in ${bucket}; nothing left behind` }
      : {
          name: `write test (${mode})`,
          status: "fail",
          detail: `${configured.detail} writing to ${bucket}`,
          fix: "check the bucket name and that the key may write there (s3:PutObject, s3:GetObject, s3:DeleteObject)",
        },
  ];
  const trips = [configured];
  // Only a store that takes writes at all can tell us about checksum modes.
  if (!configured.ok && config.checksums === "WHEN_SUPPORTED" && !configured.leftBehind) {
    const fallback = await roundTrip(probe, bucket, "WHEN_REQUIRED");
    trips.push(fallback);
    if (fallback.ok)
      checks.push({
        name: "SDK default checksums",
        status: "fail",
        detail: `the store refuses the AWS SDK's default (when_supported) checksums but takes writes without them`,
        fix: "set STORE_CHECKSUMS=when_required",
      });
  } else if (configured.ok) {
    const defaults =
      config.checksums === "WHEN_SUPPORTED" ? configured : await roundTrip(probe, bucket, "WHEN_SUPPORTED");
    if (defaults !== configured) trips.push(defaults);
    // Here the configured mode works; whether the SDK's default does too decides the advice.
    checks.push(
      defaults.ok
        ? {
            name: "SDK default checksums",
            status: "ok",
            detail: `the store accepts the AWS SDK's default (when_supported) checksums${config.checksums === "WHEN_REQUIRED" ? "; either STORE_CHECKSUMS works" : ""}`,
          }
        : {
            name: "SDK default checksums",
            status: "ok",
            detail: `the store refuses the AWS SDK's default checksums (${defaults.detail}); keep STORE_CHECKSUMS=when_required, as configured`,
          },
    );
  }
  return [...checks, ...leftBehindChecks(bucket, trips)];
}
