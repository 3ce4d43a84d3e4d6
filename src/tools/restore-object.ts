/**
 * Restores of archived objects (GLACIER, DEEP_ARCHIVE, an Intelligent-Tiering
 * archive tier): one object, or every archived object under a prefix (a job
 * past the call budget). Each restore is billed by the store, so it is a dry
 * run (what would be restored, at which tier, for how long) unless
 * confirm: true, and the user is asked where the client can. A restore under
 * way is left to finish; a restored copy gets its days set anew.
 */
import { z } from "zod";
import { listAll } from "../bulk/listing.ts";
import { CONFIRMATIONS, NOT_CONFIRMED } from "../runtime/confirmation.ts";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import type { RestoreTier } from "../storage/types.ts";
import { bucketName, keyPrefix, objectKey } from "../tool-kit/schemas.ts";
import { applies, confirmArg, decide } from "../tool-kit/settings-change.ts";
import { defineTool, type ToolContext, textOutput } from "../tool-kit/types.ts";

/** Storage classes a listing shows as needing a restore. */
const ARCHIVED_CLASSES = new Set(["GLACIER", "DEEP_ARCHIVE"]);
/** A class whose archive tiers show only in a HEAD (x-amz-archive-status): each such object under a prefix is asked. */
const TIERED = "INTELLIGENT_TIERING";
/** The most objects one call restores: each is billed; the next call goes on (ones under way count as such). */
const MAX_OBJECTS = 10_000;
const IN_FLIGHT = 8;
const LISTED = 50;

const inputSchema = z
  .object({
    bucket_name: bucketName,
    object_key: objectKey.optional(),
    prefix: keyPrefix.optional().describe("Or all archived under it."),
    days: z.number().int().min(1).max(36_500).describe("Days kept."),
    tier: z.enum(["Expedited", "Standard", "Bulk"]).optional().describe("Default Standard."),
    confirm: confirmArg,
  })
  .strict();

const outcome = z.enum(["started", "in_progress", "extended"]);

export const restoreObject = defineTool({
  name: "restore_object",
  title: "Restore archived objects",
  description:
    "Restores an archived object (GLACIER, DEEP_ARCHIVE, archive tiers) for days, or all under prefix: billed, ready in minutes to hours.",
  inputSchema,
  outputSchema: z.object({
    bucket: z.string(),
    applied: z.boolean(),
    confirmation: z.enum(CONFIRMATIONS),
    tier: z.string(),
    days: z.number(),
    matched: z.number(),
    bytes: z.number(),
    more_remaining: z.boolean(),
    sample: z.array(z.string()),
    counts: z.record(outcome, z.number()),
    failed: z.array(z.object({ key: z.string(), code: z.string(), message: z.string() })),
    next: z.string().optional(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "admin",
  writesToStore: true,
  needsAllowAdmin: true,
  handsBack: (args) => args.prefix !== undefined,
  emptyIsValue: ["prefix"],
  async handler(args, ctx) {
    if ((args.object_key === undefined) === (args.prefix === undefined))
      throw new ActionableError({
        resource: "object_key",
        code: "InvalidParameter",
        message: "Give either object_key (one object) or prefix (every archived object under it), exactly one.",
        hint: 'call again with object_key: "…" or prefix: "archive/2024/".',
      });
    const tier: RestoreTier = args.tier ?? "Standard";
    const where =
      args.prefix !== undefined
        ? `${s3Uri(args.bucket_name, args.prefix)}*`
        : s3Uri(args.bucket_name, args.object_key!);
    const { keys, bytes, more } =
      args.prefix !== undefined
        ? await archivedUnder(args.bucket_name, args.prefix, ctx)
        : await oneArchived(args, ctx);
    const base = { bucket: args.bucket_name, tier, days: args.days, matched: keys.length, bytes, more_remaining: more };
    const counts = { started: 0, in_progress: 0, extended: 0 };
    const sample = keys.slice(0, 20);
    if (keys.length === 0)
      return textOutput(`Nothing archived at ${where}: nothing to restore.`, {
        ...base,
        applied: false,
        confirmation: "not_asked" as const,
        sample,
        counts,
        failed: [],
      });
    const what = `${keys.length}${more ? "+" : ""} archived object(s) (${bytes} bytes) at ${where}, ${tier} tier, kept ${args.days} day(s)`;
    const decision = await decide(
      args.confirm,
      "restore",
      `Restore ${what}? The store bills each restore (and its retrieval by the byte); the copies are ready in minutes to hours.`,
      ctx,
    );
    if (!applies(decision)) {
      const next =
        decision === "dry_run"
          ? "call restore_object again with the same arguments and confirm: true to restore them."
          : NOT_CONFIRMED[decision as "declined" | "cancelled"].next;
      const lead = decision === "dry_run" ? "Dry run" : NOT_CONFIRMED[decision as "declined" | "cancelled"].lead;
      return textOutput(
        `${lead}: would restore ${what}, e.g. ${sample.join(", ")}. Nothing was restored. Next: ${next}`,
        {
          ...base,
          applied: false,
          confirmation: decision === "declined" || decision === "cancelled" ? decision : ("not_asked" as const),
          sample,
          counts,
          failed: [],
          next,
        },
      );
    }
    const { counts: asked, failed } = await restoreEach(
      keys,
      { bucket: args.bucket_name, days: args.days, tier },
      where,
      ctx,
    );
    Object.assign(counts, asked);
    const next = more ? "call restore_object again with the same arguments for the next objects." : undefined;
    const text =
      `Restore asked for ${keys.length - failed.length} of ${keys.length} archived object(s) at ${where} (${tier} tier, ${args.days} day(s); billed by the store): ` +
      `${counts.started} started, ${counts.in_progress} already under way, ${counts.extended} already restored (days set anew)` +
      (failed.length
        ? `; ${failed.length} failed, e.g. ${failed
            .slice(0, 3)
            .map((f) => `${f.key}: ${f.code}`)
            .join("; ")}`
        : "") +
      ". head_object shows when each copy is ready." +
      (next ? ` Next: ${next}` : "");
    return textOutput(text, {
      ...base,
      applied: true,
      confirmation: decision === "accepted" ? ("accepted" as const) : ("not_asked" as const),
      sample,
      counts,
      failed: failed.slice(0, LISTED),
      next,
    });
  },
});

type Failed = { key: string; code: string; message: string };

/** Asks the store to restore each key, IN_FLIGHT at once: what each answer said, and the keys it refused (the call's cancellation ends it). */
async function restoreEach(
  keys: string[],
  { bucket, ...restore }: { bucket: string; days: number; tier: RestoreTier },
  where: string,
  ctx: ToolContext,
): Promise<{ counts: Record<"started" | "in_progress" | "extended", number>; failed: Failed[] }> {
  const counts = { started: 0, in_progress: 0, extended: 0 };
  const failed: Failed[] = [];
  let done = 0;
  const queue = [...keys];
  const worker = async () => {
    for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
      ctx.signal.throwIfAborted();
      try {
        counts[await ctx.storage.restoreObject({ bucket, key }, restore, ctx.signal)]++;
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        const e = err instanceof ActionableError ? err : undefined;
        failed.push({ key, code: e?.code ?? "Error", message: e?.message ?? String(err) });
      }
      ctx.progress.report(++done, keys.length, `restoring ${where}: ${done} of ${keys.length}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, keys.length) }, worker));
  return { counts, failed };
}

/** The one object, if it is archived: its class and restore state said first, from a HEAD. */
async function oneArchived(args: z.output<typeof inputSchema>, ctx: ToolContext) {
  const addr = { bucket: args.bucket_name, key: args.object_key! };
  const head = await ctx.storage.headObject(addr, ctx.signal);
  const cls = head.storage_class ?? "STANDARD";
  if (!ARCHIVED_CLASSES.has(cls) && !(cls === TIERED && head.archive_status))
    throw new ActionableError({
      resource: s3Uri(addr.bucket, addr.key),
      code: "NotArchived",
      message: `The object is in ${cls}${cls === TIERED ? " outside its archive tiers" : ""}, which is read directly: there is nothing to restore.`,
      hint: "read it with get_object.",
    });
  if (head.restore?.in_progress)
    throw new ActionableError({
      resource: s3Uri(addr.bucket, addr.key),
      code: "RestoreAlreadyInProgress",
      message: "A restore of this object is already under way; nothing new was asked (or billed).",
      hint: "wait: head_object shows when the restored copy is ready (minutes to hours, by the tier asked).",
    });
  return { keys: [addr.key], bytes: head.size ?? 0, more: false };
}

/**
 * The archived objects under a prefix, at most MAX_OBJECTS of them: GLACIER and DEEP_ARCHIVE as listed, an
 * Intelligent-Tiering object when its HEAD names an archive tier (asked IN_FLIGHT at once).
 */
async function archivedUnder(bucket: string, prefix: string, ctx: ToolContext) {
  const keys: string[] = [];
  let bytes = 0;
  let tiered: { key: string; size: number }[] = [];
  const askTiered = async () => {
    const archived = await Promise.all(
      tiered.map(async (o) => {
        // Deleted since it was listed: nothing to restore. Any other refusal is the call's.
        const head = await ctx.storage.headObject({ bucket, key: o.key }, ctx.signal).catch((err: unknown) => {
          if (err instanceof ActionableError && (err.code === "NotFound" || err.code === "NoSuchKey")) return undefined;
          throw err;
        });
        return head?.archive_status ? o : undefined;
      }),
    );
    tiered = [];
    return archived.filter((o) => o !== undefined);
  };
  const take = (objects: { key: string; size: number }[]) => {
    for (const o of objects) {
      if (keys.length === MAX_OBJECTS) return false;
      keys.push(o.key);
      bytes += o.size;
    }
    return true;
  };
  for await (const object of listAll(ctx.storage, bucket, prefix, ctx.signal)) {
    const cls = object.storage_class ?? "";
    if (cls === TIERED) tiered.push(object);
    if (tiered.length === IN_FLIGHT && !take(await askTiered())) return { keys, bytes, more: true };
    if (!ARCHIVED_CLASSES.has(cls)) continue;
    if (!take([object])) return { keys, bytes, more: true };
  }
  if (!take(await askTiered())) return { keys, bytes, more: true };
  return { keys, bytes, more: false };
}
