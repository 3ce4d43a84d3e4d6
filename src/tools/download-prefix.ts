import { z } from "zod";
import { type Action, type Outcome, runJob, Slots } from "../bulk/engine.ts";
import { excludeList, globList, pathFilter } from "../bulk/filters.ts";
import { folderPrefix, listAll } from "../bulk/listing.ts";
import { FileFolderClash, unsafeLocalName } from "../bulk/local-names.ts";
import { deleteExtraneous, deletesHeldBack } from "../bulk/mirror.ts";
import { isDryRun, jobResultSchema, nextCall, summarize, Tally } from "../bulk/tally.ts";
import { localIsObject, stateOf } from "../bulk/unchanged.ts";
import { s3Uri } from "../runtime/errors.ts";
import type { ObjectInfo } from "../storage/index.ts";
import {
  BULK_CONCURRENCY,
  BULK_HELD_BYTES,
  confirm,
  DEFAULT_BULK_OBJECTS,
  dryRun,
  maxObjects,
  SMALL_DOWNLOAD_CONCURRENCY,
  SMALL_OBJECT_BYTES,
  skipUnchanged,
} from "../tool-kit/bulk-schemas.ts";
import { bucketName, keyPrefix } from "../tool-kit/schemas.ts";
import { defineTool, type ToolContext, textOutput } from "../tool-kit/types.ts";

const MiB = 1024 * 1024;
/** File systems that ignore case: `A.txt` and `a.txt` would be one file there. */
const FOLDS_CASE = process.platform === "darwin" || process.platform === "win32";

const inputSchema = z
  .object({
    bucket_name: bucketName,
    prefix: keyPrefix.describe('e.g. "logs/2026-11/" ("" = all).'),
    local_dir: z
      .string()
      .min(1, "local_dir must not be empty")
      .max(4096)
      .describe('e.g. "./logs" (created if missing).'),
    include: globList("prefix").optional(),
    exclude: excludeList.optional(),
    skip_unchanged: skipUnchanged.optional(),
    overwrite: z.boolean().optional().describe("Replace local files that differ (else: conflicts)."),
    delete_extraneous: z.boolean().optional().describe("Mirror: delete local files the prefix lacks."),
    dry_run: dryRun.optional(),
    confirm: confirm.optional(),
    max_objects: maxObjects.optional(),
  })
  .strict();
type Args = z.output<typeof inputSchema>;

export const downloadPrefix = defineTool({
  name: "download_prefix",
  title: "Download a prefix",
  description: "Downloads every object under prefix into local_dir, atomic and verified; calling again resumes.",
  inputSchema,
  outputSchema: jobResultSchema.extend({ bucket: z.string(), prefix: z.string(), local_dir: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "read",
  handsBack: true,
  writesToStore: false,
  localFiles: "always",
  emptyIsValue: ["prefix"],
  deletes: (args) => args.delete_extraneous === true,
  heldBytes: () => BULK_HELD_BYTES,
  async handler(args, ctx) {
    // The job's folders are held across its files and let go when it ends (held-dirs.ts).
    const keyed = ctx.files.forStoreKeys();
    try {
      return await downloadInto(args, ctx, keyed);
    } finally {
      keyed.release();
    }
  },
});

/** What planning one listed object needs: the call, where files go, which are wanted, and the slots they are fetched in. */
interface DownloadJob {
  args: Args;
  ctx: ToolContext;
  /** The call's files, paths made from keys (held folders). */
  keyed: ToolContext["files"];
  prefix: string;
  localDir: { path: string; exists: boolean };
  inJob: (rel: string) => boolean;
  tally: Tally;
  clash: FileFolderClash;
  /** What the prefix holds, by relative path: a mirror keeps these local files. */
  wanted: Set<string> | undefined;
  units: Slots;
}

/** The job: every listed object into local_dir through `keyed` (paths made from keys). */
async function downloadInto(args: Args, ctx: ToolContext, keyed: ToolContext["files"]) {
  const prefix = folderPrefix(args.prefix);
  // Listed keys with "." or ".." segments are refused as local names before any GET (local-names.ts).
  const mirror = args.delete_extraneous === true;
  const dry = isDryRun(args, mirror);
  const root = args.local_dir.replace(/[\\/]+$/, "") || args.local_dir;
  const job: DownloadJob = {
    args,
    ctx,
    keyed,
    prefix,
    localDir: await ctx.files.checkDirectory(root), // refused here when outside the allowed directories
    inJob: pathFilter(args.include, args.exclude),
    tally: new Tally(ctx.progress, "download_prefix"),
    clash: new FileFolderClash(),
    wanted: mirror ? new Set<string>() : undefined,
    // Downloads hold units of SMALL_DOWNLOAD_CONCURRENCY (unitsOf). Slots are taken in order, so small ones queued behind a large one wait for it.
    units: new Slots(SMALL_DOWNLOAD_CONCURRENCY),
  };
  const { tally, localDir } = job;
  const end = await runJob<ObjectInfo>({
    items: listAll(ctx.storage, args.bucket_name, prefix, ctx.signal),
    nameOf: (o) => o.key,
    concurrency: SMALL_DOWNLOAD_CONCURRENCY,
    limit: args.max_objects ?? DEFAULT_BULK_OBJECTS,
    dryRun: dry,
    signal: ctx.signal,
    tally,
    plan: (object) => planDownload(job, object),
  });
  const held = mirror ? deletesHeldBack(end, tally) : undefined;
  const declined = mirror && !held && localDir.exists ? await deleteExtraneousFiles(job, root, dry) : undefined;
  const next = declined?.next ?? nextCall("download_prefix", end, dry, args.dry_run === true, "download and delete");
  const result = {
    ...tally.result(dry, end === "complete", next),
    bucket: args.bucket_name,
    prefix,
    local_dir: localDir.path,
  };
  const note =
    held && mirror ? ` Extraneous local files were not deleted: ${held}.` : declined ? ` ${declined.note}.` : "";
  return textOutput(
    summarize(result, { verb: "downloaded", where: `from ${s3Uri(args.bucket_name, prefix)} to ${localDir.path}` }) +
      note,
    result,
  );
}

/**
 * A small object (one GET, bound by the store's answer time) holds one unit, a bigger one four (BULK_CONCURRENCY of
 * them at most), a large one (over 8 MiB) all of them. A large one streams from a near store as fast as the store
 * sends (16 ranges from a far one); beside small downloads that keep this thread busy, what its connection
 * buffered meanwhile lifted the peak, while taking turns costs the bulk bench little (BENCH_ONLY=bulk).
 */
function unitsOf(size: number): number {
  if (size > 8 * MiB) return SMALL_DOWNLOAD_CONCURRENCY;
  return size > SMALL_OBJECT_BYTES ? SMALL_DOWNLOAD_CONCURRENCY / BULK_CONCURRENCY : 1;
}

/** One listed object: ignored, refused as a local name, unchanged, a conflict, or a download to run. */
async function planDownload(job: DownloadJob, object: ObjectInfo): Promise<Outcome | Action> {
  const { args, prefix } = job;
  const rel = object.key.slice(prefix.length);
  // A folder marker (an empty "a/" object) is no file: the folder appears when a file below it is written.
  if (rel === "" || (rel.endsWith("/") && object.size === 0) || !job.inJob(rel)) return { kind: "ignored" };
  job.wanted?.add(rel);
  job.tally.know(object.size);
  const why = unsafeLocalName(rel) ?? job.clash.claim(rel, FOLDS_CASE);
  if (why) return { kind: "unsafe", name: object.key, code: "UnsafeLocalName", message: `${why}; not written.` };
  // Below the directory's real path, every step a real directory: a symlink on the way makes the key unsafe.
  const given = `${job.localDir.path}/${rel}`;
  const state = await localStateOf(job, object, given);
  if (state === "link")
    return {
      kind: "unsafe",
      name: object.key,
      code: "UnsafeLocalPath",
      message: `a symlink lies on the way to ${given}; not written (paths made from keys follow no symlink).`,
    };
  if (state === "same") return { kind: "unchanged", name: object.key, bytes: object.size };
  if (state === "differs" && !args.overwrite) {
    return {
      kind: "conflict",
      name: object.key,
      code: "LocalFileDiffers",
      message: `${given} differs from the object and was left as it is; call again with overwrite: true to replace it.`,
    };
  }
  const fetch = () => downloadOne(job.ctx, job.keyed, args.bucket_name, object, given, state === "differs");
  const run = async (): Promise<Outcome> => {
    await job.units.use(fetch, unitsOf(object.size));
    return { kind: "done", name: object.key, bytes: object.size };
  };
  return { kind: "action", name: object.key, bytes: object.size, run };
}

/** The local file at `given` against the object: none, the same, different, or a symlink on the way (then unsafe). */
function localStateOf(
  job: DownloadJob,
  object: ObjectInfo,
  given: string,
): Promise<"absent" | "same" | "differs" | "link"> {
  return job.keyed
    .withFile(given, async (local) => {
      if (!local) return "absent" as const;
      const skip = job.args.skip_unchanged !== false;
      return skip && (await localIsObject(stateOf(object), local.size, local.mtimeMs, local.md5))
        ? ("same" as const)
        : ("differs" as const);
    })
    .catch((err: unknown) => {
      if ((err as { code?: string }).code === "UnsafeLocalPath") return "link" as const;
      throw err;
    });
}

/** A mirror's last step: the local files under the directory that the prefix does not hold (the job's filters apply), deleted once the user confirms. */
async function deleteExtraneousFiles(job: DownloadJob, root: string, dryRun: boolean) {
  const extraneous: string[] = [];
  for await (const file of job.ctx.files.walk(root, { skipped() {} }, true)) {
    await file.source.close();
    if (!job.wanted!.has(file.rel) && job.inJob(file.rel) && !file.rel.endsWith(".partial")) extraneous.push(file.rel);
  }
  return deleteExtraneous({
    names: extraneous.map((rel) => `${job.localDir.path}/${rel}`),
    where: root,
    dryRun,
    tally: job.tally,
    confirmWithUser: job.ctx.confirmWithUser,
    remove: async (paths) => removeAll(job.keyed, paths),
  });
}

/**
 * One object to one file, as get_object download does it: written atomically
 * into the held target directory (the whole path checked again), verified
 * (length, MD5 or checksums), given the object's time. The plan already
 * looked at the target, so it is not checked a second time before the GET.
 */
async function downloadOne(
  ctx: ToolContext,
  files: ToolContext["files"],
  bucket: string,
  object: ObjectInfo,
  given: string,
  overwrite: boolean,
): Promise<void> {
  const download = await ctx.storage.openObjectDownload({ bucket, key: object.key }, ctx.signal, {
    listed: { size: object.size, etag: object.etag },
  });
  try {
    const modified = download.meta.last_modified ? new Date(download.meta.last_modified) : undefined;
    await files.writeDownload(
      { given, path: given },
      {
        size: download.size,
        fill: (write, have) => download.deliver(write, undefined, have),
        check: download.check,
        ...(download.resume ? { resume: download.resume } : {}),
      },
      { overwrite, signal: ctx.signal, sha256: false, holder: ctx.call, ...(modified ? { mtime: modified } : {}) },
    );
  } finally {
    download.discard();
  }
}

async function removeAll(
  files: ToolContext["files"],
  paths: string[],
): Promise<{ name: string; code: string; message: string }[]> {
  const failed = [];
  for (const path of paths) {
    try {
      await files.remove(path);
    } catch (err) {
      const e = err as { code?: string; message?: string };
      failed.push({ name: path, code: e.code ?? "LocalIOError", message: String(e.message).slice(0, 300) });
    }
  }
  return failed;
}
