import { z } from "zod";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import { bucketName, objectKey } from "./schemas.ts";
import { defineTool, textOutput, type ToolContext } from "./types.ts";

export const DEFAULT_MAX_OBJECTS = 1000;
export const MAX_OBJECTS_CAP = 10_000;
const SAMPLE = 20;
/** Keys listed back in a result; the counts cover the rest. */
const LISTED = 1000;

const inputSchema = z
  .object({
    bucket_name: bucketName,
    keys: z.array(objectKey).min(1).max(MAX_OBJECTS_CAP).optional().describe("Exact keys (or give prefix)."),
    prefix: z.string().max(1024).optional().describe('Keys starting with this ("" = all).'),
    dry_run: z.boolean().optional().describe("true: only count and sample."),
    confirm: z.boolean().optional().describe("true: delete (else a dry run)."),
    max_objects: z.number().int().min(1).max(MAX_OBJECTS_CAP).optional().describe(`Default ${DEFAULT_MAX_OBJECTS}.`),
  })
  .strict();

export const deleteObjects = defineTool({
  name: "delete_objects",
  title: "Delete many objects",
  description:
    "Deletes objects by keys or prefix: a dry run (count, sample) unless confirm: true; " +
    `then at most max_objects (cap ${MAX_OBJECTS_CAP}); the user confirms where the client can ask.`,
  inputSchema,
  outputSchema: z.object({
    bucket: z.string(),
    dry_run: z.boolean(),
    matched: z.number(),
    more_remaining: z.boolean(),
    sample: z.array(z.string()),
    deleted_count: z.number(),
    deleted: z.array(z.string()),
    failed: z.array(z.object({ key: z.string(), code: z.string(), message: z.string() })),
    next: z.string().optional().describe("The next call, when there is more."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  group: "delete",
  writesToStore: true,
  // prefix "" selects every key: a real value. Beside keys, though, it is a client's filler (below).
  emptyIsValue: ["prefix"],
  async handler(given, ctx) {
    ctx.checkBucket(given.bucket_name);
    const args: typeof given = given.keys !== undefined && given.prefix === "" ? { ...given, prefix: undefined } : given;
    if ((args.keys === undefined) === (args.prefix === undefined)) {
      throw new ActionableError({ resource: "keys", code: "InvalidParameter", message: "Give either keys (exact keys) or prefix, exactly one of them.", hint: 'call again with keys: ["a.txt", …] or prefix: "logs/2023/".' });
    }
    const max = args.max_objects ?? DEFAULT_MAX_OBJECTS;
    const { keys, more } = await select(args, max, ctx);
    const where = args.prefix !== undefined ? s3Uri(args.bucket_name, args.prefix) + "*" : `${keys.length} listed key(s) in s3://${args.bucket_name}`;
    const base = { bucket: args.bucket_name, matched: keys.length, more_remaining: more, deleted_count: 0, deleted: [], failed: [] };
    if (keys.length === 0) return textOutput(`Nothing matches ${where}; nothing deleted.`, { ...base, dry_run: true, sample: [] });

    const approved = args.dry_run ? false : await approval(keys.length, where, args.confirm === true, ctx);
    if (!approved) {
      const sample = keys.slice(0, SAMPLE);
      const why = args.dry_run ? "Dry run" : approved === false && args.confirm ? "The user declined" : "Dry run (no confirm: true)";
      const next = args.dry_run || !args.confirm ? "call delete_objects again with the same arguments and confirm: true (dry_run false) to delete them." : undefined;
      return textOutput(
        `${why}: ${keys.length}${more ? "+" : ""} object(s) would be deleted from ${where}, e.g. ${sample.join(", ")}. Nothing was deleted.` + (next ? ` Next: ${next}` : ""),
        { ...base, dry_run: true, sample, ...(next ? { next } : {}) },
      );
    }
    const out = await ctx.storage.deleteObjects(args.bucket_name, keys, ctx.signal);
    const failed = out.failed.slice(0, LISTED);
    const text =
      `Deleted ${out.deleted.length} of ${keys.length} object(s) from ${where}` +
      (out.deleted.some((d) => d.delete_marker) ? " (versioned bucket: delete markers added, older versions kept)" : "") +
      (failed.length ? `; ${out.failed.length} failed, e.g. ${failed.slice(0, 5).map((f) => `${f.key}: ${f.code}`).join("; ")}` : "") +
      (more ? `. More objects match: call again to delete the next ${max}.` : ".");
    const next = more ? `call delete_objects again with the same arguments to delete the next ${max}.` : undefined;
    return textOutput(text, { ...base, dry_run: false, sample: [], deleted_count: out.deleted.length, deleted: out.deleted.slice(0, LISTED).map((d) => d.key), failed, ...(next ? { next } : {}) });
  },
});

async function select(args: z.output<typeof inputSchema>, max: number, ctx: ToolContext): Promise<{ keys: string[]; more: boolean }> {
  if (args.keys) return { keys: [...new Set(args.keys)].slice(0, max), more: new Set(args.keys).size > max };
  return ctx.storage.listKeys(args.bucket_name, args.prefix ?? "", max, ctx.signal);
}

/** The user confirms where the client can ask; elsewhere the model's confirm: true stands. */
async function approval(count: number, where: string, confirmed: boolean, ctx: ToolContext): Promise<boolean | undefined> {
  if (!confirmed) return undefined;
  const answer = await ctx.confirmWithUser(`Delete ${count} object(s) from ${where}? This cannot be undone in an unversioned bucket.`);
  return answer ?? true;
}
