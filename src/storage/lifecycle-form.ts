/**
 * Lifecycle rules in the small form the tools speak (one filter, one
 * expiration, noncurrent versions, incomplete uploads, one transition), and
 * S3's rules converted to and from it. A stored rule with parts the form
 * cannot say keeps them (`other` names them): rules a change does not touch
 * are written back exactly as the store sent them (bucket-settings.ts).
 */
import type { LifecycleRule as SdkRule } from "@aws-sdk/client-s3";
import type { LifecycleRule } from "./types.ts";

export function ruleFromSdk(rule: SdkRule): LifecycleRule {
  const other: string[] = [];
  const filter = rule.Filter;
  const and = filter?.And;
  const prefix = filter?.Prefix ?? and?.Prefix ?? rule.Prefix;
  const tags = and?.Tags ?? (filter?.Tag ? [filter.Tag] : []);
  if (tags.length > 1) other.push(`${tags.length} tags in the filter`);
  if (
    filter?.ObjectSizeGreaterThan !== undefined ||
    and?.ObjectSizeGreaterThan !== undefined ||
    filter?.ObjectSizeLessThan !== undefined ||
    and?.ObjectSizeLessThan !== undefined
  )
    other.push("an object size filter");
  if (rule.Expiration?.Date) other.push(`expiration on ${rule.Expiration.Date.toISOString().slice(0, 10)}`);
  if (rule.Expiration?.ExpiredObjectDeleteMarker) other.push("expired delete markers removed");
  if ((rule.Transitions?.length ?? 0) > 1) other.push(`${rule.Transitions!.length} transitions`);
  if (rule.NoncurrentVersionTransitions?.length) other.push("noncurrent version transitions");
  const transition = rule.Transitions?.[0];
  if (transition?.Date) other.push("a transition on a date");
  const out: LifecycleRule = {
    id: rule.ID ?? "",
    enabled: rule.Status === "Enabled",
    ...(prefix ? { prefix } : {}),
    ...(tags.length === 1 ? { tag: { key: tags[0]!.Key ?? "", value: tags[0]!.Value ?? "" } } : {}),
    ...(rule.Expiration?.Days !== undefined ? { expire_after_days: rule.Expiration.Days } : {}),
    ...(rule.NoncurrentVersionExpiration?.NoncurrentDays !== undefined
      ? { noncurrent_expire_after_days: rule.NoncurrentVersionExpiration.NoncurrentDays }
      : {}),
    ...(rule.NoncurrentVersionExpiration?.NewerNoncurrentVersions !== undefined
      ? { keep_noncurrent_versions: rule.NoncurrentVersionExpiration.NewerNoncurrentVersions }
      : {}),
    ...(rule.AbortIncompleteMultipartUpload?.DaysAfterInitiation !== undefined
      ? { abort_incomplete_uploads_after_days: rule.AbortIncompleteMultipartUpload.DaysAfterInitiation }
      : {}),
    ...(transition?.Days !== undefined
      ? { transition_after_days: transition.Days, transition_storage_class: transition.StorageClass ?? "" }
      : {}),
    ...(other.length ? { other } : {}),
  };
  return out;
}

export function ruleToSdk(rule: LifecycleRule): SdkRule {
  const filter =
    rule.tag && rule.prefix
      ? { And: { Prefix: rule.prefix, Tags: [{ Key: rule.tag.key, Value: rule.tag.value }] } }
      : rule.tag
        ? { Tag: { Key: rule.tag.key, Value: rule.tag.value } }
        : { Prefix: rule.prefix ?? "" };
  const noncurrent =
    rule.noncurrent_expire_after_days !== undefined || rule.keep_noncurrent_versions !== undefined
      ? {
          NoncurrentVersionExpiration: {
            NoncurrentDays: rule.noncurrent_expire_after_days ?? 1,
            ...(rule.keep_noncurrent_versions !== undefined
              ? { NewerNoncurrentVersions: rule.keep_noncurrent_versions }
              : {}),
          },
        }
      : {};
  return {
    ID: rule.id,
    Status: rule.enabled ? "Enabled" : "Disabled",
    Filter: filter,
    ...(rule.expire_after_days !== undefined ? { Expiration: { Days: rule.expire_after_days } } : {}),
    ...noncurrent,
    ...(rule.abort_incomplete_uploads_after_days !== undefined
      ? { AbortIncompleteMultipartUpload: { DaysAfterInitiation: rule.abort_incomplete_uploads_after_days } }
      : {}),
    ...(rule.transition_after_days !== undefined
      ? { Transitions: [{ Days: rule.transition_after_days, StorageClass: rule.transition_storage_class as never }] }
      : {}),
  };
}
