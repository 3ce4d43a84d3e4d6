import type { Config } from "../../config/config.ts";
import { s3Uri } from "../../runtime/errors.ts";
import { type ErrorContext, toStorageError } from "../errors.ts";
import type { ObjectAddress } from "../types.ts";
import type { S3Handle } from "./client.ts";
import { deadlineError, startDeadline } from "./deadline.ts";

/** Options for one SDK send: the abort signal and the per-attempt time to first byte. */
export interface SendOptions {
  abortSignal: AbortSignal;
  requestTimeout: number;
}

export type Operation = <T>(
  ctx: ErrorContext,
  signal: AbortSignal | undefined,
  fn: (s3: S3Handle, send: SendOptions) => Promise<T>,
) => Promise<T>;

/**
 * Runs one call that is not a streaming transfer under the operation
 * deadline, and turns any failure into an ActionableError about `ctx`.
 */
export function operationRunner(config: Config, getClient: () => Promise<S3Handle>): Operation {
  return async (ctx, signal, fn) => {
    const deadline = startDeadline(config.operationTimeoutMs, config.maxAttempts, signal);
    try {
      return await deadline.race(
        getClient().then((s3) => fn(s3, { abortSignal: deadline.signal, requestTimeout: deadline.attemptTimeoutMs })),
      );
    } catch (err) {
      if (deadline.expired())
        throw deadlineError(ctx.bucket === undefined ? "s3" : s3Uri(ctx.bucket, ctx.key), config.operationTimeoutMs);
      throw toStorageError(err, ctx);
    } finally {
      deadline.dispose();
    }
  };
}

/** Bucket, Key and VersionId for an SDK command. */
export function objectParams(addr: ObjectAddress) {
  return { Bucket: addr.bucket, Key: addr.key, ...(addr.versionId ? { VersionId: addr.versionId } : {}) };
}

export function errorContext(addr: ObjectAddress): ErrorContext {
  return { bucket: addr.bucket, key: addr.key, ...(addr.versionId ? { versionId: addr.versionId } : {}) };
}
