import type { WriteEncryption } from "../config/encryption-config.ts";
import { ActionableError, isAbortError, s3Uri } from "../runtime/errors.ts";
import { scrubSecrets } from "../runtime/redact.ts";

/** What a failed storage call was about, so the error can name it. */
export interface ErrorContext {
  bucket?: string;
  key?: string;
  versionId?: string;
  /** A hint for this call that beats the generic one for the code (e.g. storage class refused). */
  hints?: Partial<Record<string, string>>;
}

interface SdkLikeError {
  name?: string;
  code?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: unknown;
  /** InvalidObjectState: the archived object's storage class (and Intelligent-Tiering's archive tier). */
  StorageClass?: string;
  AccessTier?: string;
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ConnectionRefused",
  "ConnectionClosed",
]);

/**
 * What a refused write says: besides a missing permission, a bucket policy that requires encryption on writes refuses
 * a write without it (or with another), and names no header in its answer.
 */
export function writeDeniedHint(encryption: WriteEncryption | undefined): string {
  const set =
    'call again with sse "aws:kms" and sse_kms_key_id set to the key the policy names (or the user sets STORE_SSE=aws:kms and STORE_SSE_KMS_KEY_ID, STORE_<NAME>_SSE… for a named store, for every write)';
  return encryption
    ? `these credentials may lack the permission to write here, or the bucket's policy may require another encryption than the one sent (x-amz-server-side-encryption: ${encryption.sse}${encryption.kmsKeyId ? `, key ${encryption.kmsKeyId}` : ""}): ask the user which, and ${set}.`
    : `these credentials may lack the permission to write here, or the bucket's policy may require encryption on writes (the x-amz-server-side-encryption header, usually aws:kms with a given key): then ${set}. Ask the user which.`;
}

/** Turns whatever the AWS SDK threw into one ActionableError. Never copies headers or URLs. */
export function toStorageError(err: unknown, ctx: ErrorContext): ActionableError {
  if (err instanceof ActionableError) return err;
  const resource = ctx.bucket === undefined ? "s3" : s3Uri(ctx.bucket, ctx.key);
  if (isAbortError(err)) {
    return new ActionableError({
      resource,
      code: "Cancelled",
      message: "The request was cancelled.",
      hint: "nothing to do; call again if it is still wanted.",
    });
  }
  const e = (typeof err === "object" && err !== null ? err : { message: String(err) }) as SdkLikeError;
  const status = e.$metadata?.httpStatusCode;
  const rawCode = e.Code ?? e.name ?? e.code ?? "UnknownError";
  const networkCode = e.code && NETWORK_CODES.has(e.code) ? e.code : NETWORK_CODES.has(rawCode) ? rawCode : undefined;
  if (networkCode || rawCode === "TimeoutError" || (rawCode === "RequestTimeout" && status === undefined)) {
    return new ActionableError({
      resource,
      code: networkCode ?? "Timeout",
      message: `The storage endpoint could not be reached or stopped answering (${scrubSecrets(e.message ?? rawCode)}).`,
      hint: "retry later; if it keeps failing, the endpoint URL (STORE_ENDPOINT_URL) or the network is wrong, which the user has to fix.",
      retryable: true,
    });
  }
  if (rawCode === "CredentialsProviderError") {
    return new ActionableError({
      resource,
      code: "NoCredentials",
      message: "No storage credentials were found.",
      hint: "the user must set STORE_ACCESS_KEY_ID and STORE_SECRET_ACCESS_KEY (or an AWS profile) in the MCP client configuration and restart the server.",
    });
  }
  // Some servers answer HEAD errors with a bare status; name them by it.
  const code =
    rawCode === "UnknownError" || rawCode === "Unknown" ? codeFromStatus(status) : normalizeCode(rawCode, status);
  const known =
    code === "ObjectArchived" ? describeArchived(ctx, e.AccessTier ?? e.StorageClass) : describeCode(code, ctx);
  return new ActionableError({
    resource,
    code,
    status,
    message: known?.message ?? `The store refused the request${plainMessage(e.message)}.`,
    hint:
      ctx.hints?.[code] ??
      known?.hint ??
      (status === 400 && CUSTOMER_KEY_NEEDED.test(e.message ?? "") ? CUSTOMER_KEY_HINT : undefined) ??
      (status !== undefined && status >= 500
        ? "retry later."
        : "check the parameters against the tool description and try again."),
    retryable: status !== undefined && (status >= 500 || status === 429),
  });
}

/** How S3 and Ceph say an object stored with a customer key (SSE-C) was asked for without it, or with another. */
const CUSTOMER_KEY_NEEDED = /customer[- ]provided key|stored using a form of server[- ]side encryption|SSE-C\b/i;
const CUSTOMER_KEY_HINT =
  "the object is likely encrypted with a customer key (SSE-C), which every request for it must carry: the user gives the server that key (STORE_SSE_C_KEY or STORE_SSE_C_KEY_FILE; STORE_<NAME>_SSE_C_KEY… for a named store) and restarts it. Ask the user.";

function plainMessage(message: string | undefined): string {
  // Ceph RGW sends "UnknownError" as its message; say nothing rather than that.
  if (!message || message === "UnknownError" || message === "Unknown") return "";
  return `: ${scrubSecrets(message).slice(0, 300)}`;
}

function normalizeCode(code: string, status: number | undefined): string {
  if (code === "NotFound" && status === 404) return "NotFound";
  // S3 refuses to read an object whose storage class keeps it offline (GLACIER, DEEP_ARCHIVE, an archive tier).
  if (code === "InvalidObjectState") return "ObjectArchived";
  if (code === "Forbidden") return "AccessDenied";
  return code;
}

function codeFromStatus(status: number | undefined): string {
  switch (status) {
    case 400:
      return "BadRequest";
    case 403:
      return "AccessDenied";
    case 404:
      return "NotFound";
    case 409:
      return "Conflict";
    case 411:
      return "MissingContentLength";
    case 416:
      return "InvalidRange";
    case 429:
      return "SlowDown";
    case 503:
      return "ServiceUnavailable";
    default:
      return status !== undefined && status >= 500 ? "InternalError" : "UnknownError";
  }
}

/** How a user gets an archived object back (a restore costs money and takes minutes to hours). */
export function archivedHint(bucket: string | undefined, key: string | undefined): string {
  return `ask the user whether to restore it (it costs money, and takes minutes to hours by tier): restore_object with bucket_name ${JSON.stringify(bucket ?? "BUCKET")}, object_key ${JSON.stringify(key ?? "KEY")} and days (the server needs --allow-admin for it; a prefix restores every archived object under it), or S3's RestoreObject elsewhere (\`aws s3api restore-object --bucket ${bucket ?? "BUCKET"} --key ${key ?? "KEY"} --restore-request Days=1\`); head_object then shows the restore in progress, and once it shows a restored copy available, call again.`;
}

/** An archived object (S3's InvalidObjectState): what it is, and how to get it back. */
function describeArchived(ctx: ErrorContext, storageClass: string | undefined): { message: string; hint: string } {
  return {
    message: `The object is archived${storageClass ? ` (${storageClass})` : ""}: the store keeps its bytes offline until it is restored, so it cannot be read, downloaded or copied now.`,
    hint: archivedHint(ctx.bucket, ctx.key),
  };
}

type Described = { message: string; hint: string };

const NO_BUCKET: Described = {
  message: "The bucket does not exist.",
  hint: "call list_buckets to see the buckets these credentials can reach.",
};

/** NoSuchKey, NotFound: the version, the bucket (a HEAD of a bucket), or the object, with where to look. */
function missingObject(ctx: ErrorContext): Described {
  if (ctx.versionId !== undefined)
    return {
      message: `No object or version ${ctx.versionId} exists at this key.`,
      hint: "check the version_id, or call again without version_id to read the latest version.",
    };
  if (ctx.key === undefined) return NO_BUCKET;
  const parent = ctx.key.includes("/") ? ctx.key.slice(0, ctx.key.lastIndexOf("/") + 1) : "";
  return {
    message: "The object does not exist.",
    hint: `call list_objects with bucket_name "${ctx.bucket ?? "?"}" and prefix "${parent}" to see which keys exist.`,
  };
}

/** AccessDenied, AllAccessDisabled. */
const DENIED: Described = {
  message: "These credentials are not allowed to do this.",
  hint: "use a bucket and key these credentials may access, or ask the user to grant the permission.",
};

/** ExpiredToken, TokenRefreshRequired, InvalidToken. */
const TOKEN_EXPIRED: Described = {
  message: "The session token is expired or invalid.",
  hint: "the user must refresh the temporary credentials (STORE_SESSION_TOKEN or the AWS profile) and restart the server.",
};

/** SlowDown, ServiceUnavailable, InternalError. */
const OVERLOADED: Described = { message: "The store is overloaded or failing.", hint: "retry later." };

/** What each S3 error code means to the model, and what to do next: a text, or one made from the call's context. */
const DESCRIBED: Record<string, Described | ((ctx: ErrorContext) => Described)> = {
  NoSuchBucket: NO_BUCKET,
  NoSuchKey: missingObject,
  NotFound: missingObject,
  NoSuchVersion: (ctx) => ({
    message: `Version ${ctx.versionId ?? "?"} does not exist.`,
    hint: "check the version_id, or call again without version_id to read the latest version.",
  }),
  AccessDenied: DENIED,
  AllAccessDisabled: DENIED,
  InvalidAccessKeyId: {
    message: "The store does not know the configured access key id.",
    hint: "the user must fix STORE_ACCESS_KEY_ID (or the endpoint it belongs to) and restart the server; retrying will not help.",
  },
  SignatureDoesNotMatch: {
    message:
      "The request signature was rejected: the secret access key (or the region) does not match the access key id.",
    hint: "the user must fix STORE_SECRET_ACCESS_KEY or STORE_REGION and restart the server; retrying will not help.",
  },
  ExpiredToken: TOKEN_EXPIRED,
  TokenRefreshRequired: TOKEN_EXPIRED,
  InvalidToken: TOKEN_EXPIRED,
  BucketNotEmpty: (ctx) => ({
    message:
      "The bucket still holds objects (or object versions); delete_bucket deletes only empty buckets and never deletes objects.",
    hint: `call list_objects on "${ctx.bucket ?? "?"}" to see what it holds; the objects must be deleted first (delete_objects, offered with --allow-delete; in a versioned bucket also every version).`,
  }),
  BucketAlreadyOwnedByYou: {
    message: "The bucket already exists and belongs to these credentials.",
    hint: "use the existing bucket; there is nothing to create.",
  },
  BucketAlreadyExists: {
    message: "The bucket name is taken by another account (bucket names are global on many stores).",
    hint: "choose a different, more specific bucket name.",
  },
  InvalidBucketName: {
    message: "The store rejected the bucket name.",
    hint: "use 3-63 characters of lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit.",
  },
  InvalidStorageClass: {
    message: "The store does not offer this storage class.",
    hint: "call again without storage_class, or with STANDARD.",
  },
  BadDigest: {
    message: "The bytes the store received do not have the MD5 they were sent with (Content-MD5): it stored nothing.",
    hint: "retry; if it repeats, the data is being corrupted on the way.",
  },
  EntityTooLarge: {
    message: "The object is larger than the store accepts.",
    hint: "the file cannot be stored as one object here.",
  },
  SlowDown: OVERLOADED,
  ServiceUnavailable: OVERLOADED,
  InternalError: OVERLOADED,
  PreconditionFailed: {
    message: "A condition of the request did not hold (a read: the object changed since its first bytes were read).",
    hint: "check the object's current state (head_object) and call again.",
  },
  NotImplemented: {
    message: "The store does not implement a feature this request uses (for example conditional writes, if_absent).",
    hint: "call again without that option (e.g. without if_absent, if replacing is acceptable).",
  },
  MissingContentLength: {
    message: "The store demanded a content length for a streamed upload.",
    hint: "the user should set STORE_CHECKSUMS=when_required for this endpoint and restart the server.",
  },
};

function describeCode(code: string, ctx: ErrorContext): Described | undefined {
  if (!Object.hasOwn(DESCRIBED, code)) return undefined;
  const described = DESCRIBED[code]!;
  return typeof described === "function" ? described(ctx) : described;
}

/** A store answered "more follows" with nothing to go on, or with the same token again: every listing loop stops here rather than repeat itself. */
export function stalledListing(resource: string): ActionableError {
  return new ActionableError({
    resource,
    code: "ListingNotAdvancing",
    message:
      "The store said more entries follow but gave no continuation token (or the same one again), so the listing cannot go on without repeating itself.",
    hint: "list a narrower prefix, or check the store: it does not page this listing correctly.",
  });
}
