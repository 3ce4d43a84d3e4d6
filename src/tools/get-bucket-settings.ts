import { z } from "zod";
import { ActionableError } from "../runtime/errors.ts";
import type { LifecycleRule, SettingPart } from "../storage/index.ts";
import { accessWords, parsePolicy, publicGrants } from "../tool-kit/bucket-policy.ts";
import { bucketName } from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

const PARTS: SettingPart[] = [
  "location",
  "versioning",
  "lifecycle",
  "cors",
  "policy",
  "public_access_block",
  "encryption",
  "object_lock",
  "tags",
  "ownership",
];

const part = z.object({
  state: z.enum(["set", "not set", "not supported", "error"]),
  value: z.unknown().optional(),
  error: z.string().optional(),
});
type Part = z.output<typeof part>;

export const getBucketSettings = defineTool({
  name: "get_bucket_settings",
  title: "Get bucket settings",
  description:
    "A bucket's settings: location, versioning, lifecycle, CORS, policy (what it makes public), public access block, encryption, object lock, tags, ownership.",
  inputSchema: z.object({ bucket_name: bucketName }).strict(),
  outputSchema: z.object({
    bucket: z.string(),
    summary: z.string(),
    public: z.array(z.string()),
    settings: z.record(z.string(), part),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  writesToStore: false,
  async handler(args, ctx) {
    const settled = await Promise.allSettled(
      PARTS.map((p) => ctx.storage.readBucketSetting(args.bucket_name, p, ctx.signal)),
    );
    const settings: Record<string, Part> = {};
    for (const [i, name] of PARTS.entries()) settings[name] = partOf(settled[i]!);
    // A bucket that is not there fails every part the same way: that is the call's answer.
    const missing = settled.find(
      (r) => r.status === "rejected" && (r.reason as ActionableError).code === "NoSuchBucket",
    );
    if (missing?.status === "rejected") throw missing.reason;
    if (settings.policy?.state === "set")
      settings.policy.value = policyValue(String(settings.policy.value), args.bucket_name);
    const grants =
      settings.policy?.state === "set" ? publicGrants(settings.policy.value as { Statement?: unknown }) : [];
    const summary = summarize(settings, grants);
    const lines = PARTS.map((name) => `${name}: ${describe(settings[name]!)}`);
    return textOutput(`s3://${args.bucket_name}: ${summary}\n${lines.join("\n")}`, {
      bucket: args.bucket_name,
      summary,
      public: grants,
      settings,
    });
  },
});

function partOf(result: PromiseSettledResult<unknown>): Part {
  if (result.status === "fulfilled")
    return result.value === null ? { state: "not set" } : { state: "set", value: result.value };
  const err = result.reason as ActionableError;
  if (err.code === "NotImplemented" || err.status === 501) return { state: "not supported" };
  return { state: "error", error: err instanceof ActionableError ? err.describe() : String(err) };
}

/** A policy as JSON (a store that returns something else: the text). */
function policyValue(text: string, bucket: string): unknown {
  try {
    return parsePolicy(text, bucket);
  } catch {
    return text;
  }
}

function describe(p: Part): string {
  if (p.state === "set") return JSON.stringify(p.value);
  return p.state === "error" ? `error: ${p.error}` : p.state;
}

/** "versioned; objects under tmp/ expire after 7 days; public read through the bucket policy". */
function summarize(settings: Record<string, Part>, grants: string[]): string {
  const out: string[] = [];
  const versioning = settings.versioning!;
  const status = versioning.state === "set" ? (versioning.value as { status: string }).status : undefined;
  out.push(
    status === "Enabled"
      ? "versioned"
      : status === "Suspended"
        ? "versioning suspended"
        : versioning.state === "not set"
          ? "not versioned"
          : "",
  );
  if (settings.lifecycle?.state === "set") out.push(...(settings.lifecycle.value as LifecycleRule[]).map(ruleSentence));
  if (grants.length) out.push(`public ${accessWords(grants)} through the bucket policy`);
  const block = settings.public_access_block;
  if (block?.state === "set" && Object.values(block.value as object).every(Boolean)) out.push("public access blocked");
  if (settings.object_lock?.state === "set") out.push("object lock on");
  if (settings.encryption?.state === "set")
    out.push(`encrypted by default (${(settings.encryption.value as { algorithm: string }[])[0]?.algorithm})`);
  if (settings.cors?.state === "set")
    out.push(
      `CORS for ${[...new Set((settings.cors.value as { allowed_origins: string[] }[]).flatMap((r) => r.allowed_origins))].join(", ")}`,
    );
  const unsupported = Object.entries(settings)
    .filter(([, p]) => p.state === "not supported")
    .map(([name]) => name);
  if (unsupported.length) out.push(`this store does not support ${unsupported.join(", ")}`);
  return out.filter(Boolean).join("; ") || "no settings";
}

export function ruleSentence(rule: LifecycleRule): string {
  const scope = rule.prefix
    ? `under ${rule.prefix}`
    : rule.tag
      ? `tagged ${rule.tag.key}=${rule.tag.value}`
      : "in the bucket";
  const acts = [
    rule.expire_after_days !== undefined ? `objects ${scope} expire after ${rule.expire_after_days} days` : "",
    rule.transition_after_days !== undefined
      ? `objects ${scope} move to ${rule.transition_storage_class} after ${rule.transition_after_days} days`
      : "",
    rule.noncurrent_expire_after_days !== undefined
      ? `old versions ${scope} expire after ${rule.noncurrent_expire_after_days} days${rule.keep_noncurrent_versions !== undefined ? ` (newest ${rule.keep_noncurrent_versions} kept)` : ""}`
      : "",
    rule.abort_incomplete_uploads_after_days !== undefined
      ? `incomplete uploads ${scope} aborted after ${rule.abort_incomplete_uploads_after_days} days`
      : "",
    ...(rule.other ?? []),
  ].filter(Boolean);
  return `${acts.join(", ") || `rule ${rule.id}`}${rule.enabled ? "" : ` (rule ${rule.id} disabled)`}`;
}
