import { z } from "zod";
import { type Action, type Outcome, runJob, Slots } from "../bulk/engine.ts";
import { excludeList, globList, pathFilter } from "../bulk/filters.ts";
import { folderPrefix, indexPrefix, listAll } from "../bulk/listing.ts";
import { isDryRun, jobResultSchema, nextCall, summarize, Tally } from "../bulk/tally.ts";
import { etagMd5, type ObjectState, sameObject, stateOf } from "../bulk/unchanged.ts";
import { NOT_CONFIRMED } from "../runtime/confirmation.ts";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import type { ObjectInfo } from "../storage/index.ts";
import {
  BULK_CONCURRENCY,
  BULK_HELD_BYTES,
  confirm,
  DEFAULT_BULK_OBJECTS,
  dryRun,
  maxObjects,
  SMALL_OBJECT_BYTES,
  SMALL_OBJECT_CONCURRENCY,
  skipUnchanged,
} from "../tool-kit/bulk-schemas.ts";
import {
  bucketName,
  callEncryption,
  encryptionArgs,
  keyPrefix,
  sourceBucketName,
  sourceKeyPrefix,
} from "../tool-kit/schemas.ts";
import { defineTool, type ToolContext, textOutput } from "../tool-kit/types.ts";

const MULTIPART_COPY_ABOVE = 5 * 1024 ** 3;
const MiB = 1024 * 1024;
/** MiB copies between stores may hold at once: a large one (its 8 MiB buffer and parts) goes alone. */
const CROSS_STORE_MIB = 48;

const inputSchema = z
  .object({
    source_bucket: sourceBucketName,
    source_prefix: sourceKeyPrefix.describe('e.g. "data/2026/" ("" = all).'),
    bucket_name: bucketName.describe("Destination bucket."),
    prefix: keyPrefix.describe('Destination, e.g. "archive/" ("" = top).'),
    include: globList("source prefix").optional(),
    exclude: excludeList.optional(),
    skip_unchanged: skipUnchanged.optional(),
    move: z.boolean().optional().describe("Delete each source once its copy is verified."),
    dry_run: dryRun.optional(),
    confirm: confirm.optional(),
    max_objects: maxObjects.optional(),
    ...encryptionArgs,
  })
  .strict();

type Args = z.output<typeof inputSchema>;

export const copyPrefix = defineTool({
  name: "copy_prefix",
  title: "Copy a prefix",
  description: "Copies every object under source_prefix to prefix + its path below it; calling again resumes.",
  inputSchema,
  outputSchema: jobResultSchema.extend({ source: z.string(), destination: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "write",
  handsBack: true,
  writesToStore: true,
  emptyIsValue: ["source_prefix", "prefix"],
  deletes: (args) => args.move === true,
  sourceStore: true,
  heldBytes: () => BULK_HELD_BYTES,
  async handler(args, ctx) {
    // From another store (source_store): each object streamed through the server.
    const other = ctx.sourceStore;
    const from = folderPrefix(args.source_prefix);
    const to = folderPrefix(args.prefix);
    if (!other && args.source_bucket === args.bucket_name && (from.startsWith(to) || to.startsWith(from))) {
      throw new ActionableError({
        resource: s3Uri(args.bucket_name, to),
        code: "OverlappingPrefixes",
        message: `The source ${s3Uri(args.source_bucket, from)} and the destination overlap in one bucket: copies would land inside what is being copied.`,
        hint: "choose a destination prefix outside the source prefix (or another bucket).",
      });
    }
    const move = args.move === true;
    const dry = isDryRun(args, move);
    const tally = new Tally(ctx.progress, "copy_prefix");
    const job: CopyJob = {
      args,
      ctx,
      other,
      from,
      to,
      move,
      tally,
      encryption: callEncryption(args),
      inJob: pathFilter(args.include, args.exclude),
      sourceUri: `${other ? `${other.name}:` : ""}${s3Uri(args.source_bucket, from)}`,
      destination: s3Uri(args.bucket_name, to),
      existing:
        args.skip_unchanged !== false
          ? await indexPrefix(ctx.storage, args.bucket_name, to, ctx.signal)
          : new Map<string, ObjectState>(),
      large: new Slots(2),
      // Small objects go SMALL_OBJECT_CONCURRENCY at once (the workers): between stores a GET and a PUT each, within one
      // store one CopyObject, each bound by the store's answer time, so more at once is faster (through the SDK it was
      // not, and peaked higher: quick-requests.ts). Bigger ones BULK_CONCURRENCY.
      notSmall: new Slots(BULK_CONCURRENCY),
      // Between stores each copy holds its bytes here (about twice a small object; a large one's buffer and parts).
      held: new Slots(CROSS_STORE_MIB),
    };
    const { sourceUri, destination } = job;
    if (move && !dry) {
      const declined = await confirmMove(job);
      if (declined) return declined;
    }
    const end = await runJob<ObjectInfo>({
      items: listAll(other?.storage ?? ctx.storage, args.source_bucket, from, ctx.signal),
      nameOf: (o) => o.key,
      concurrency: SMALL_OBJECT_CONCURRENCY,
      limit: args.max_objects ?? DEFAULT_BULK_OBJECTS,
      dryRun: dry,
      signal: ctx.signal,
      tally,
      plan: async (object) => planCopy(job, object),
    });
    const next = nextCall("copy_prefix", end, dry, args.dry_run === true, "move (copy, then delete each source)");
    const result = { ...tally.result(dry, end === "complete", next), source: sourceUri, destination };
    return textOutput(
      summarize(result, { verb: move ? "moved" : "copied", where: `from ${sourceUri} to ${destination}` }),
      result,
    );
  },
});

/** What planning and running one object's copy needs: the call, both places, what the destination holds, and the slots. */
interface CopyJob {
  args: Args;
  ctx: ToolContext;
  /** The source's store when it is another (source_store). */
  other: ToolContext["sourceStore"];
  from: string;
  to: string;
  move: boolean;
  tally: Tally;
  encryption: ReturnType<typeof callEncryption>;
  inJob: (rel: string) => boolean;
  sourceUri: string;
  destination: string;
  /** What the destination holds under `to`, by relative path (empty unless skip_unchanged). */
  existing: Map<string, ObjectState>;
  large: Slots;
  notSmall: Slots;
  held: Slots;
}

/** A move asks the user first; declined or cancelled, the call's result (nothing copied or deleted), else undefined. */
async function confirmMove(job: CopyJob) {
  const { tally, sourceUri, destination } = job;
  tally.confirmation = await job.ctx.confirmWithUser(
    "move",
    `Move the objects under ${sourceUri} to ${destination}, deleting each source once its copy is verified?`,
  );
  if (tally.confirmation !== "declined" && tally.confirmation !== "cancelled") return undefined;
  const { lead, next } = NOT_CONFIRMED[tally.confirmation];
  // Over, not unfinished: nothing is left to do unless the user asks.
  const result = {
    ...tally.result(false, true, `${next} To copy without deleting, call again without move.`),
    source: sourceUri,
    destination,
  };
  return textOutput(
    `${lead}: the move from ${sourceUri} to ${destination} did not run; nothing was copied or deleted. Next: ${result.next}`,
    result,
  );
}

/** A move deletes in the source's store (the server checked that it allows deletes). */
async function removeSource(job: CopyJob, key: string): Promise<void> {
  await (job.other ?? job.ctx).storage.deleteObject({ bucket: job.args.source_bucket, key }, job.ctx.signal);
  job.tally.removed(key);
}

/** One listed object: ignored, a key too long, unchanged (a move's delete still to do), or a copy to run. */
function planCopy(job: CopyJob, object: ObjectInfo): Outcome | Action {
  const { move } = job;
  const rel = object.key.slice(job.from.length);
  if (rel === "" || !job.inJob(rel)) return { kind: "ignored" };
  job.tally.know(object.size);
  const key = job.to + rel;
  if (Buffer.byteLength(key) > 1024)
    return {
      kind: "unsafe",
      name: object.key,
      code: "KeyTooLong",
      message: `${key} would be over S3's 1024-byte key limit; not copied.`,
    };
  const there = job.existing.get(rel);
  if (there && sameObject(stateOf(object), there)) {
    if (!move) return { kind: "unchanged", name: key, bytes: object.size };
    // Already copied (a resumed move): only the source's delete is left.
    const finish = async (): Promise<Outcome> => {
      await removeSource(job, object.key);
      return { kind: "unchanged", name: key, bytes: object.size };
    };
    return { kind: "action", name: key, bytes: 0, alsoDeletes: object.key, run: finish };
  }
  // A listed key with "." or ".." segments is refused by the store's allowlist (its storage's decorator) on either
  // side: reported as unsafe, the rest go on.
  const safely = (signal: AbortSignal) =>
    copyOne(job, object, key, signal).catch((err: unknown): Outcome => {
      if (err instanceof ActionableError && err.code === "UnsafeKey")
        return { kind: "unsafe", name: object.key, code: err.code, message: err.message };
      throw err;
    });
  const run = (signal: AbortSignal) =>
    object.size <= SMALL_OBJECT_BYTES ? safely(signal) : job.notSmall.use(() => safely(signal));
  return { kind: "action", name: key, bytes: object.size, ...(move ? { alsoDeletes: object.key } : {}), run };
}

/** One object's copy (within the store, or from the other through the server), then a move's check and delete. */
async function copyOne(job: CopyJob, object: ObjectInfo, key: string, signal: AbortSignal): Promise<Outcome> {
  const { args, ctx, other, encryption } = job;
  const req = {
    source: { bucket: args.source_bucket, key: object.key },
    bucket: args.bucket_name,
    key,
    metadataDirective: "COPY" as const,
    listed: { size: object.size, etag: object.etag },
    ...(encryption ? { encryption } : {}),
    ...(other ? { sourceStore: other.name } : {}),
  };
  const copied = other
    ? await job.held.use(
        () => ctx.storage.copyFrom(other.storage, req, signal),
        Math.min(CROSS_STORE_MIB, Math.max(1, Math.ceil((2 * object.size) / MiB))),
      )
    : // A multipart copy (over 5 GiB) has 4 parts in flight of its own.
      object.size > MULTIPART_COPY_ABOVE
      ? await job.large.use(() => ctx.storage.copyObject(req, signal))
      : await ctx.storage.copyObject(req, signal);
  if (job.move) {
    verifyCopy(object, copied, key);
    await removeSource(job, object.key);
  }
  return { kind: "done", name: key, bytes: copied.size };
}

/** Before a move deletes its source: the copy has the source's size, and its MD5 where both ETags are one. */
function verifyCopy(source: ObjectInfo, copied: { size: number; etag: string | null }, key: string): void {
  const a = etagMd5(source.etag);
  const b = etagMd5(copied.etag);
  if (copied.size === source.size && (!a || !b || a === b)) return;
  throw new ActionableError({
    resource: key,
    code: "IntegrityCheckFailed",
    message: `The copy does not match its source (${copied.size} vs ${source.size} bytes, ETag ${copied.etag} vs ${source.etag}); the source was kept.`,
    hint: "call again; if it repeats, copy this object with copy_object and compare.",
  });
}
