/**
 * Bucket settings and object tags over the AWS SDK: each part of a bucket's
 * configuration read with its own request, "not set" (S3's NoSuch…/…NotFound
 * answers) as null, and the few changes the admin tools make.
 */

import { iso } from "./iso-date.ts";
import { ruleFromSdk, ruleToSdk } from "./lifecycle-form.ts";
import type { S3Handle } from "./requests/client.ts";
import { errorContext, type Operation, objectParams, type SendOptions } from "./requests/operation.ts";
import type { SettingPart, SettingsStore } from "./types.ts";

/** The codes with which S3 (and Ceph) say a part of a bucket's configuration is not set. */
const NOT_SET = new Set([
  "NoSuchLifecycleConfiguration",
  "NoSuchCORSConfiguration",
  "NoSuchBucketPolicy",
  "NoSuchPublicAccessBlockConfiguration",
  "ServerSideEncryptionConfigurationNotFoundError",
  "ObjectLockConfigurationNotFoundError",
  "NoSuchTagSet",
  "NoSuchTagSetError",
  "OwnershipControlsNotFoundError",
  "NoSuchObjectLockConfiguration",
]);

async function orNotSet<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (err) {
    const e = err as { name?: string; Code?: string };
    if (NOT_SET.has(e.Code ?? e.name ?? "")) return null;
    throw err;
  }
}

type Reader = (s3: S3Handle, bucket: string, send: SendOptions) => Promise<unknown>;

const READERS: Record<SettingPart, Reader> = {
  location: async ({ client, sdk }, bucket, send) =>
    (await client.send(new sdk.GetBucketLocationCommand({ Bucket: bucket }), send)).LocationConstraint || "us-east-1",
  versioning: async ({ client, sdk }, bucket, send) => {
    const out = await client.send(new sdk.GetBucketVersioningCommand({ Bucket: bucket }), send);
    return out.Status ? { status: out.Status, mfa_delete: out.MFADelete ?? "Disabled" } : null;
  },
  lifecycle: async ({ client, sdk }, bucket, send) => {
    const out = await orNotSet(client.send(new sdk.GetBucketLifecycleConfigurationCommand({ Bucket: bucket }), send));
    return out?.Rules?.length ? out.Rules.map(ruleFromSdk) : null;
  },
  cors: async ({ client, sdk }, bucket, send) => {
    const out = await orNotSet(client.send(new sdk.GetBucketCorsCommand({ Bucket: bucket }), send));
    return out?.CORSRules?.length
      ? out.CORSRules.map((r) => ({
          ...(r.ID ? { id: r.ID } : {}),
          allowed_origins: r.AllowedOrigins ?? [],
          allowed_methods: r.AllowedMethods ?? [],
          ...(r.AllowedHeaders?.length ? { allowed_headers: r.AllowedHeaders } : {}),
          ...(r.ExposeHeaders?.length ? { expose_headers: r.ExposeHeaders } : {}),
          ...(r.MaxAgeSeconds !== undefined ? { max_age_seconds: r.MaxAgeSeconds } : {}),
        }))
      : null;
  },
  policy: async ({ client, sdk }, bucket, send) =>
    (await orNotSet(client.send(new sdk.GetBucketPolicyCommand({ Bucket: bucket }), send)))?.Policy ?? null,
  public_access_block: async ({ client, sdk }, bucket, send) => {
    const c = (await orNotSet(client.send(new sdk.GetPublicAccessBlockCommand({ Bucket: bucket }), send)))
      ?.PublicAccessBlockConfiguration;
    return c
      ? {
          block_public_acls: c.BlockPublicAcls ?? false,
          ignore_public_acls: c.IgnorePublicAcls ?? false,
          block_public_policy: c.BlockPublicPolicy ?? false,
          restrict_public_buckets: c.RestrictPublicBuckets ?? false,
        }
      : null;
  },
  encryption: async ({ client, sdk }, bucket, send) => {
    const rules = (await orNotSet(client.send(new sdk.GetBucketEncryptionCommand({ Bucket: bucket }), send)))
      ?.ServerSideEncryptionConfiguration?.Rules;
    return rules?.length
      ? rules.map((r) => ({
          algorithm: r.ApplyServerSideEncryptionByDefault?.SSEAlgorithm ?? null,
          ...(r.ApplyServerSideEncryptionByDefault?.KMSMasterKeyID
            ? { kms_key_id: r.ApplyServerSideEncryptionByDefault.KMSMasterKeyID }
            : {}),
          ...(r.BucketKeyEnabled !== undefined ? { bucket_key_enabled: r.BucketKeyEnabled } : {}),
        }))
      : null;
  },
  object_lock: async ({ client, sdk }, bucket, send) => {
    const c = (await orNotSet(client.send(new sdk.GetObjectLockConfigurationCommand({ Bucket: bucket }), send)))
      ?.ObjectLockConfiguration;
    if (c?.ObjectLockEnabled !== "Enabled") return null;
    const d = c.Rule?.DefaultRetention;
    return {
      enabled: true,
      default_retention: d
        ? {
            mode: d.Mode ?? null,
            ...(d.Days !== undefined ? { days: d.Days } : {}),
            ...(d.Years !== undefined ? { years: d.Years } : {}),
          }
        : null,
    };
  },
  tags: async ({ client, sdk }, bucket, send) => {
    const set = (await orNotSet(client.send(new sdk.GetBucketTaggingCommand({ Bucket: bucket }), send)))?.TagSet;
    return set?.length ? Object.fromEntries(set.map((t) => [t.Key ?? "", t.Value ?? ""])) : null;
  },
  ownership: async ({ client, sdk }, bucket, send) =>
    (await orNotSet(client.send(new sdk.GetBucketOwnershipControlsCommand({ Bucket: bucket }), send)))
      ?.OwnershipControls?.Rules?.[0]?.ObjectOwnership ?? null,
};

export function createSettingsStore(operation: Operation): SettingsStore {
  return {
    readBucketSetting: (bucket, part, signal) =>
      operation({ bucket }, signal, (s3, send) => READERS[part](s3, bucket, send)),

    setBucketVersioning: (bucket, status, signal) =>
      operation({ bucket }, signal, async ({ client, sdk }, send) => {
        await client.send(
          new sdk.PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: status } }),
          send,
        );
      }),

    setBucketLifecycle: (bucket, change, signal) =>
      operation({ bucket }, signal, async ({ client, sdk }, send) => {
        // Rules kept are written back exactly as stored (the tools' form may not say all of a rule).
        const stored = change.keep.length
          ? ((await orNotSet(client.send(new sdk.GetBucketLifecycleConfigurationCommand({ Bucket: bucket }), send)))
              ?.Rules ?? [])
          : [];
        const rules = [...stored.filter((r) => change.keep.includes(r.ID ?? "")), ...change.set.map(ruleToSdk)];
        if (rules.length === 0) await client.send(new sdk.DeleteBucketLifecycleCommand({ Bucket: bucket }), send);
        else
          await client.send(
            new sdk.PutBucketLifecycleConfigurationCommand({
              Bucket: bucket,
              LifecycleConfiguration: { Rules: rules },
            }),
            send,
          );
      }),

    setBucketCors: (bucket, rules, signal) =>
      operation({ bucket }, signal, async ({ client, sdk }, send) => {
        if (rules.length === 0) {
          await client.send(new sdk.DeleteBucketCorsCommand({ Bucket: bucket }), send);
          return;
        }
        const CORSRules = rules.map((r) => ({
          ...(r.id ? { ID: r.id } : {}),
          AllowedOrigins: r.allowed_origins,
          AllowedMethods: r.allowed_methods,
          ...(r.allowed_headers ? { AllowedHeaders: r.allowed_headers } : {}),
          ...(r.expose_headers ? { ExposeHeaders: r.expose_headers } : {}),
          ...(r.max_age_seconds !== undefined ? { MaxAgeSeconds: r.max_age_seconds } : {}),
        }));
        await client.send(new sdk.PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules } }), send);
      }),

    setBucketPolicy: (bucket, policy, signal) =>
      operation({ bucket }, signal, async ({ client, sdk }, send) => {
        if (policy === null) await client.send(new sdk.DeleteBucketPolicyCommand({ Bucket: bucket }), send);
        else await client.send(new sdk.PutBucketPolicyCommand({ Bucket: bucket, Policy: policy }), send);
      }),

    getObjectTags: (addr, signal) =>
      operation(errorContext(addr), signal, async ({ client, sdk }, send) => {
        const out = await client.send(new sdk.GetObjectTaggingCommand(objectParams(addr)), send);
        return Object.fromEntries((out.TagSet ?? []).map((t) => [t.Key ?? "", t.Value ?? ""]));
      }),

    putObjectTags: (addr, tags, signal) =>
      operation(errorContext(addr), signal, async ({ client, sdk }, send) => {
        const out = await client.send(
          new sdk.PutObjectTaggingCommand({
            ...objectParams(addr),
            Tagging: { TagSet: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) },
          }),
          send,
        );
        return { version_id: out.VersionId ?? null };
      }),

    getObjectLock: (addr, signal) =>
      operation(errorContext(addr), signal, async ({ client, sdk }, send) => {
        // An object without retention or legal hold answers that one "not set"; any other error is the call's.
        const [retention, hold] = await Promise.all([
          orNotSet(client.send(new sdk.GetObjectRetentionCommand(objectParams(addr)), send)).then((o) => o?.Retention),
          orNotSet(client.send(new sdk.GetObjectLegalHoldCommand(objectParams(addr)), send)).then((o) => o?.LegalHold),
        ]);
        return {
          retention: retention?.Mode ? { mode: retention.Mode, retain_until: iso(retention.RetainUntilDate) } : null,
          legal_hold: hold?.Status ?? null,
        };
      }),
  };
}
