/**
 * Object lock writes (an object's retention and legal hold, a bucket's
 * default retention) and restores of archived objects, over the AWS SDK.
 * Each is one request; what may be asked, and of whom, is the tools' and the
 * policy's (tools/set-object-lock.ts, tools/restore-object.ts).
 */
import type { StoreQuirks } from "./quirks.ts";
import { errorContext, type Operation, objectParams } from "./requests/operation.ts";
import type { LockAndRestoreStore } from "./types.ts";

const RESTORE_HINTS = {
  // S3: a restore of an object that is not archived (or an archive tier not yet reached).
  InvalidObjectState:
    "the object is not archived (its storage class is read directly), so there is nothing to restore: read it with get_object.",
};

/** A store that does not remove a retention (quirks.removesRetention false: Ceph RGW 16 takes only a mode and a date). */
const REMOVAL_HINTS = {
  MalformedXML:
    'this store does not remove a retention: shorten it instead (mode "GOVERNANCE", an earlier retain_until, bypass_governance: true).',
};

export function createLockAndRestoreStore(operation: Operation, quirks: StoreQuirks): LockAndRestoreStore {
  return {
    setObjectRetention: (addr, retention, bypassGovernance, signal) =>
      operation(
        { ...errorContext(addr), hints: retention || quirks.removesRetention ? {} : REMOVAL_HINTS },
        signal,
        async ({ client, sdk }, send) => {
          await client.send(
            new sdk.PutObjectRetentionCommand({
              ...objectParams(addr),
              // No mode and no date: the retention is removed (only a GOVERNANCE one, with the bypass).
              Retention: retention ? { Mode: retention.mode, RetainUntilDate: new Date(retention.retain_until) } : {},
              ...(bypassGovernance ? { BypassGovernanceRetention: true } : {}),
            }),
            send,
          );
        },
      ),

    setObjectLegalHold: (addr, status, signal) =>
      operation(errorContext(addr), signal, async ({ client, sdk }, send) => {
        await client.send(
          new sdk.PutObjectLegalHoldCommand({ ...objectParams(addr), LegalHold: { Status: status } }),
          send,
        );
      }),

    setDefaultRetention: (bucket, rule, signal) =>
      operation(
        {
          bucket,
          hints: {
            InvalidRequest:
              "object lock may not be enabled on this bucket: a bucket gets it when it is created (or, on AWS, once versioning is on); ask the user.",
          },
        },
        signal,
        async ({ client, sdk }, send) => {
          await client.send(
            new sdk.PutObjectLockConfigurationCommand({
              Bucket: bucket,
              ObjectLockConfiguration: {
                ObjectLockEnabled: "Enabled",
                ...(rule ? { Rule: { DefaultRetention: { Mode: rule.mode, Days: rule.days } } } : {}),
              },
            }),
            send,
          );
        },
      ),

    restoreObject: (addr, request, signal) =>
      operation({ ...errorContext(addr), hints: RESTORE_HINTS }, signal, async ({ client, sdk }, send) => {
        try {
          const out = await client.send(
            new sdk.RestoreObjectCommand({
              ...objectParams(addr),
              RestoreRequest: { Days: request.days, GlacierJobParameters: { Tier: request.tier } },
            }),
            send,
          );
          // 202: a restore was started; 200: a restored copy was there, and its days are set anew.
          return out.$metadata.httpStatusCode === 200 ? "extended" : "started";
        } catch (err) {
          if ((err as { name?: string }).name === "RestoreAlreadyInProgress") return "in_progress";
          throw err;
        }
      }),
  };
}
