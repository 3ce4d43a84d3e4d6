import { z } from "zod";
import { type Action, type Outcome, runJob, Slots } from "../bulk/engine.ts";
import { excludeList, globList, pathFilter } from "../bulk/filters.ts";
import { folderPrefix, indexPrefix } from "../bulk/listing.ts";
import { deleteExtraneous, deletesHeldBack } from "../bulk/mirror.ts";
import { isDryRun, jobResultSchema, nextCall, summarize, Tally } from "../bulk/tally.ts";
import { md5OfSource, mtimeMetadata, type ObjectState, sameAsLocal } from "../bulk/unchanged.ts";
import type { WalkedFile } from "../local/index.ts";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import {
  BULK_CONCURRENCY,
  BULK_HELD_BYTES,
  confirm,
  DEFAULT_BULK_OBJECTS,
  dryRun,
  maxObjects,
  skipUnchanged,
} from "../tool-kit/bulk-schemas.ts";
import {
  bucketName,
  cacheControl,
  callEncryption,
  contentType,
  encryptionArgs,
  keyPrefix,
  storageClass,
} from "../tool-kit/schemas.ts";
import { defineTool, type ToolContext, textOutput } from "../tool-kit/types.ts";
import { detectContentType } from "./upload-file.ts";

const MiB = 1024 * 1024;

const inputSchema = z
  .object({
    local_dir: z.string().min(1, "local_dir must not be empty").max(4096).describe('Local directory, e.g. "./site".'),
    bucket_name: bucketName,
    prefix: keyPrefix.describe('e.g. "releases/v2/" ("" = top).'),
    include: globList("directory").optional(),
    exclude: excludeList.optional(),
    skip_unchanged: skipUnchanged.optional(),
    delete_extraneous: z.boolean().optional().describe("Mirror: delete objects the directory lacks."),
    dry_run: dryRun.optional(),
    confirm: confirm.optional(),
    content_type: contentType.optional().describe("For every file (default: detected)."),
    cache_control: cacheControl.optional(),
    storage_class: storageClass.optional(),
    max_objects: maxObjects.optional(),
    ...encryptionArgs,
  })
  .strict();

type Args = z.output<typeof inputSchema>;

export const uploadDirectory = defineTool({
  name: "upload_directory",
  title: "Upload a directory",
  description: "Uploads a local directory to prefix + each relative path; calling again resumes.",
  inputSchema,
  outputSchema: jobResultSchema.extend({ bucket: z.string(), prefix: z.string(), local_dir: z.string() }),
  // Destructive: it replaces objects at the same keys (and a mirror deletes).
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "write",
  handsBack: true,
  writesToStore: true,
  localFiles: "always",
  emptyIsValue: ["prefix"],
  deletes: (args) => args.delete_extraneous === true,
  heldBytes: () => BULK_HELD_BYTES,
  async handler(args, ctx) {
    const prefix = folderPrefix(args.prefix);
    // Walked names are never "." or "..": the prefix is the one part of a key that could carry such a segment.
    const mirror = args.delete_extraneous === true;
    const dry = isDryRun(args, mirror);
    const limit = args.max_objects ?? DEFAULT_BULK_OBJECTS;
    const inJob = pathFilter(args.include, args.exclude);
    const tally = new Tally(ctx.progress, "upload_directory");
    const where = s3Uri(args.bucket_name, prefix);
    const localDir = await ctx.files.checkDirectory(args.local_dir); // refused here when outside the allowed directories
    if (!localDir.exists) {
      throw new ActionableError({
        resource: args.local_dir,
        code: "LocalDirectoryNotFound",
        message: "No directory exists at this path.",
        hint: "check local_dir; relative paths start from the first allowed directory.",
      });
    }
    // What is there already: to skip unchanged files, and what a mirror deletes (whatever is left at the end).
    const existing =
      args.skip_unchanged !== false || mirror
        ? await indexPrefix(ctx.storage, args.bucket_name, prefix, ctx.signal)
        : new Map<string, ObjectState>();
    const walk = ctx.files.walk(args.local_dir, {
      skipped: (s) => {
        existing.delete(s.rel);
        tally.skipLocal({ name: s.rel, code: s.code, message: s.message });
      },
    });
    const job: UploadJob = {
      args,
      ctx,
      prefix,
      existing,
      inJob,
      tally,
      encryption: callEncryption(args),
      // Small files go 32 at a time; of those read whole into memory (1-5 MiB) 4 at once, of those sent in parts (over 5 MiB, each 3-12 parts in flight) 2.
      medium: new Slots(4),
      large: new Slots(2),
    };
    const end = await runJob<WalkedFile>({
      items: walk,
      nameOf: (f) => prefix + f.rel,
      dispose: (f) => f.source.close(),
      concurrency: BULK_CONCURRENCY,
      limit,
      dryRun: dry,
      signal: ctx.signal,
      tally,
      plan: (file) => planUpload(job, file),
    });
    // A mirror deletes what is left of the listing: keys the walk never met, within include/exclude (folder markers stay).
    const extraneous = mirror
      ? [...existing.keys()].filter((rel) => inJob(rel) && !rel.endsWith("/") && rel !== "")
      : [];
    const held = mirror ? deletesHeldBack(end, tally) : undefined;
    const declined = held ? undefined : await deleteExtraneousObjects(job, extraneous, where, dry);
    const next = declined?.next ?? nextCall("upload_directory", end, dry, args.dry_run === true, "upload and delete");
    const result = {
      ...tally.result(dry, end === "complete", next),
      bucket: args.bucket_name,
      prefix,
      local_dir: localDir.path,
    };
    const note =
      held && extraneous.length
        ? ` ${extraneous.length} extraneous object(s) not deleted: ${held}.`
        : declined
          ? ` ${declined.note}.`
          : "";
    return textOutput(
      summarize(result, { verb: "uploaded", where: `from ${localDir.path} to ${where}` }) + note,
      result,
    );
  },
});

/** What planning and running one file's upload needs: the call, the destination, what it holds, and the slots. */
interface UploadJob {
  args: Args;
  ctx: ToolContext;
  prefix: string;
  /** What the prefix holds, by relative path; each walked file takes its own out (a mirror deletes what is left). */
  existing: Map<string, ObjectState>;
  inJob: (rel: string) => boolean;
  tally: Tally;
  encryption: ReturnType<typeof callEncryption>;
  medium: Slots;
  large: Slots;
}

/** One walked file: ignored, a key too long, unchanged, or an upload to run. */
async function planUpload(job: UploadJob, file: WalkedFile): Promise<Outcome | Action> {
  const { args, ctx } = job;
  const object = job.existing.get(file.rel);
  job.existing.delete(file.rel);
  if (!job.inJob(file.rel)) return { kind: "ignored" };
  const key = job.prefix + file.rel;
  job.tally.know(file.size);
  if (Buffer.byteLength(key) > 1024)
    return {
      kind: "unsafe",
      name: key,
      code: "KeyTooLong",
      message: "prefix + relative path is over S3's 1024-byte key limit; not uploaded.",
    };
  const md5 = () => md5OfSource(file.source.readAt, file.size);
  const storedMtime = async () =>
    (await ctx.storage.headObject({ bucket: args.bucket_name, key }, ctx.signal)).metadata.mtime;
  if (object && args.skip_unchanged !== false && (await sameAsLocal(object, file.size, file.mtimeMs, md5, storedMtime)))
    return { kind: "unchanged", name: key, bytes: file.size };
  return { kind: "action", name: key, bytes: file.size, run: (signal) => uploadOne(job, file, key, signal) };
}

/** One file to its key, in the slot its size takes. */
async function uploadOne(job: UploadJob, file: WalkedFile, key: string, signal: AbortSignal): Promise<Outcome> {
  const { args, ctx, encryption } = job;
  const contentType = args.content_type ?? (await detectContentType(file.rel, key));
  const send = () =>
    ctx.storage.uploadObject(
      {
        bucket: args.bucket_name,
        key,
        readAt: file.source.readAt,
        slice: file.source.slice,
        size: file.size,
        // A large file cut mid-upload is kept and continued by the next call (docs/reliability.md).
        source: { id: file.source.path, version: String(file.mtimeMs) },
        contentType,
        metadata: mtimeMetadata(file.mtimeMs),
        ...(args.storage_class ? { storageClass: args.storage_class } : {}),
        ...(args.cache_control ? { cacheControl: args.cache_control } : {}),
        ...(encryption ? { encryption } : {}),
      },
      signal,
    );
  await (file.size > 5 * MiB ? job.large.use(send) : file.size > MiB ? job.medium.use(send) : send());
  return { kind: "done", name: key, bytes: file.size };
}

/** A mirror's last step: the objects the directory lacks, deleted once the user confirms. */
function deleteExtraneousObjects(job: UploadJob, extraneous: string[], where: string, dryRun: boolean) {
  const { args, ctx } = job;
  return deleteExtraneous({
    names: extraneous.map((rel) => job.prefix + rel),
    where,
    dryRun,
    tally: job.tally,
    confirmWithUser: ctx.confirmWithUser,
    remove: async (keys) =>
      (await ctx.storage.deleteObjects(args.bucket_name, keys, ctx.signal)).failed.map((f) => ({
        name: f.key,
        code: f.code,
        message: f.message,
      })),
  });
}
