/** Bucket settings, object tags, object lock and restores: the storage layer's types for the admin tools. */
import type { ObjectAddress } from "./address.ts";

/** A lifecycle rule in the tools' form (lifecycle-form.ts converts it to and from S3's). */
export interface LifecycleRule {
  id: string;
  enabled: boolean;
  prefix?: string;
  tag?: { key: string; value: string };
  expire_after_days?: number;
  noncurrent_expire_after_days?: number;
  keep_noncurrent_versions?: number;
  abort_incomplete_uploads_after_days?: number;
  transition_after_days?: number;
  transition_storage_class?: string;
  /** What the stored rule also says that this form cannot (kept when the rule is written back). */
  other?: string[];
}

export interface CorsRule {
  id?: string;
  allowed_origins: string[];
  allowed_methods: string[];
  allowed_headers?: string[];
  expose_headers?: string[];
  max_age_seconds?: number;
}

/** The parts of a bucket's configuration get_bucket_settings reads, each with its own request. */
export type SettingPart =
  | "location"
  | "versioning"
  | "lifecycle"
  | "cors"
  | "policy"
  | "public_access_block"
  | "encryption"
  | "object_lock"
  | "tags"
  | "ownership";

/** Bucket settings and object tags: each read answers null for "not set"; a store without the feature throws NotImplemented. */
export interface SettingsStore {
  readBucketSetting(bucket: string, part: SettingPart, signal?: AbortSignal): Promise<unknown>;
  setBucketVersioning(bucket: string, status: "Enabled" | "Suspended", signal?: AbortSignal): Promise<void>;
  /** Writes `set` and keeps the stored rules named in `keep` exactly as they are; nothing at all removes the configuration. */
  /** `deletes`: the change has the store delete objects or versions (or drops rules): a policy checks the delete level for it. */
  setBucketLifecycle(
    bucket: string,
    change: { keep: string[]; set: LifecycleRule[]; deletes?: boolean },
    signal?: AbortSignal,
  ): Promise<void>;
  /** An empty list removes the CORS configuration. */
  setBucketCors(bucket: string, rules: CorsRule[], signal?: AbortSignal): Promise<void>;
  /** null removes the bucket policy. */
  setBucketPolicy(bucket: string, policy: string | null, signal?: AbortSignal): Promise<void>;
  getObjectTags(addr: ObjectAddress, signal?: AbortSignal): Promise<Record<string, string>>;
  putObjectTags(
    addr: ObjectAddress,
    tags: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<{ version_id: string | null }>;
  /** Retention and legal hold (object lock); null where not set. */
  getObjectLock(
    addr: ObjectAddress,
    signal?: AbortSignal,
  ): Promise<{ retention: { mode: string; retain_until: string | null } | null; legal_hold: string | null }>;
}

/** Object lock writes and restores of archived objects (lock-and-restore.ts). */
export interface LockAndRestoreStore {
  /** null removes the retention (a GOVERNANCE one, with `bypassGovernance`); the bypass also lets a date move earlier. */
  setObjectRetention(
    addr: ObjectAddress,
    retention: { mode: "GOVERNANCE" | "COMPLIANCE"; retain_until: string } | null,
    bypassGovernance: boolean,
    signal?: AbortSignal,
  ): Promise<void>;
  setObjectLegalHold(addr: ObjectAddress, status: "ON" | "OFF", signal?: AbortSignal): Promise<void>;
  /** The bucket's default retention for new objects; null removes it (object lock stays on). */
  setDefaultRetention(
    bucket: string,
    rule: { mode: "GOVERNANCE" | "COMPLIANCE"; days: number } | null,
    signal?: AbortSignal,
  ): Promise<void>;
  /** Asks for a restored copy of an archived object for `days`: started, already under way, or an existing copy's days set anew. */
  restoreObject(
    addr: ObjectAddress,
    request: { days: number; tier: RestoreTier },
    signal?: AbortSignal,
  ): Promise<"started" | "in_progress" | "extended">;
}

export type RestoreTier = "Expedited" | "Standard" | "Bulk";
