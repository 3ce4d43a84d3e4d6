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
import { defineTool, textOutput } from "../tool-kit/types.ts";

const MULTIPART_COPY_ABOVE = 5 * 1024 ** 3;
const MiB = 1024 * 1024;
/** MiB copies between stores may hold at once: a large one (its 8 MiB buffer and parts) goes alone. */
const CROSS_STORE_MIB = 48;

export const copyPrefix = defineTool({
  name: "copy_prefix",
  title: "Copy a prefix",
  description: "Copies every object under source_prefix to prefix + its path below it; calling again resumes.",
  inputSchema: z
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
    .strict(),
  outputSchema: jobResultSchema.extend({ source: z.string(), destination: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "write",
  handsBack: true,
  writesToStore: true,
  emptyIsValue: ["source_prefix", "prefix"],
  deletes: (args) => args.move === true,
  sourceStore: true,
  heldBytes: () => BULK_HELD_BYTES,
  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a known exception (docs/architecture.md), to be split into named steps
  async handler(args, ctx) {
    // From another store (source_store): each object streamed through the server.
    const other = ctx.sourceStore;
    const encryption = callEncryption(args);
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
    const inJob = pathFilter(args.include, args.exclude);
    const tally = new Tally(ctx.progress, "copy_prefix");
    const sourceUri = `${other ? `${other.name}:` : ""}${s3Uri(args.source_bucket, from)}`;
    const destination = s3Uri(args.bucket_name, to);
    // A move deletes in the source's store (the server checked that it allows deletes).
    const removeSource = async (key: string) => {
      await (other ?? ctx).storage.deleteObject({ bucket: args.source_bucket, key }, ctx.signal);
      tally.removed(key);
    };
    const existing =
      args.skip_unchanged !== false
        ? await indexPrefix(ctx.storage, args.bucket_name, to, ctx.signal)
        : new Map<string, ObjectState>();
    if (move && !dry) {
      tally.confirmation = await ctx.confirmWithUser(
        "move",
        `Move the objects under ${sourceUri} to ${destination}, deleting each source once its copy is verified?`,
      );
      if (tally.confirmation === "declined" || tally.confirmation === "cancelled") {
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
    }
    const large = new Slots(2);
    // Small objects go SMALL_OBJECT_CONCURRENCY at once (the workers): between stores a GET and a PUT each, within one store
    // one CopyObject, each bound by the store's answer time, so more at once is faster (through the SDK it was not, and
    // peaked higher: quick-requests.ts). Bigger ones BULK_CONCURRENCY.
    const notSmall = new Slots(BULK_CONCURRENCY);
    // Between stores each copy holds its bytes here (about twice a small object; a large one's buffer and parts).
    const held = new Slots(CROSS_STORE_MIB);
    const end = await runJob<ObjectInfo>({
      items: listAll(other?.storage ?? ctx.storage, args.source_bucket, from, ctx.signal),
      nameOf: (o) => o.key,
      concurrency: SMALL_OBJECT_CONCURRENCY,
      limit: args.max_objects ?? DEFAULT_BULK_OBJECTS,
      dryRun: dry,
      signal: ctx.signal,
      tally,
      async plan(object): Promise<Outcome | Action> {
        const rel = object.key.slice(from.length);
        if (rel === "" || !inJob(rel)) return { kind: "ignored" };
        tally.know(object.size);
        const key = to + rel;
        if (Buffer.byteLength(key) > 1024)
          return {
            kind: "unsafe",
            name: object.key,
            code: "KeyTooLong",
            message: `${key} would be over S3's 1024-byte key limit; not copied.`,
          };
        const there = existing.get(rel);
        if (there && sameObject(stateOf(object), there)) {
          if (!move) return { kind: "unchanged", name: key, bytes: object.size };
          // Already copied (a resumed move): only the source's delete is left.
          const finish = async (): Promise<Outcome> => {
            await removeSource(object.key);
            return { kind: "unchanged", name: key, bytes: object.size };
          };
          return { kind: "action", name: key, bytes: 0, alsoDeletes: object.key, run: finish };
        }
        const copy = async (signal: AbortSignal): Promise<Outcome> => {
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
            ? await held.use(
                () => ctx.storage.copyFrom(other.storage, req, signal),
                Math.min(CROSS_STORE_MIB, Math.max(1, Math.ceil((2 * object.size) / MiB))),
              )
            : // A multipart copy (over 5 GiB) has 4 parts in flight of its own.
              object.size > MULTIPART_COPY_ABOVE
              ? await large.use(() => ctx.storage.copyObject(req, signal))
              : await ctx.storage.copyObject(req, signal);
          if (move) {
            verifyCopy(object, copied, key);
            await removeSource(object.key);
          }
          return { kind: "done", name: key, bytes: copied.size };
        };
        // A listed key with "." or ".." segments is refused by the store's allowlist (its storage's decorator) on either
        // side: reported as unsafe, the rest go on.
        const safely = (signal: AbortSignal) =>
          copy(signal).catch((err: unknown): Outcome => {
            if (err instanceof ActionableError && err.code === "UnsafeKey")
              return { kind: "unsafe", name: object.key, code: err.code, message: err.message };
            throw err;
          });
        const run = (signal: AbortSignal) =>
          object.size <= SMALL_OBJECT_BYTES ? safely(signal) : notSmall.use(() => safely(signal));
        return { kind: "action", name: key, bytes: object.size, ...(move ? { alsoDeletes: object.key } : {}), run };
      },
    });
    const next = nextCall("copy_prefix", end, dry, args.dry_run === true, "move (copy, then delete each source)");
    const result = { ...tally.result(dry, end === "complete", next), source: sourceUri, destination };
    return textOutput(
      summarize(result, { verb: move ? "moved" : "copied", where: `from ${sourceUri} to ${destination}` }),
      result,
    );
  },
});

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
