import { z } from "zod";
import { CONFIRMATIONS, type Confirmation, NOT_CONFIRMED } from "../runtime/confirmation.ts";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import { bucketName, objectKey } from "../tool-kit/schemas.ts";
import { defineTool, type ToolContext, textOutput } from "../tool-kit/types.ts";

export const DEFAULT_MAX_OBJECTS = 1000;
export const MAX_OBJECTS_CAP = 10_000;
const SAMPLE = 20;
/** Keys listed back in a result; the counts cover the rest. */
const LISTED = 1000;

const inputSchema = z
  .object({
    bucket_name: bucketName,
    keys: z.array(objectKey).max(MAX_OBJECTS_CAP).optional().describe("Exact keys (or give prefix)."),
    prefix: z.string().max(1024).optional().describe('Keys starting with this ("" = all).'),
    dry_run: z.boolean().optional().describe("true: only count and sample."),
    confirm: z.boolean().optional().describe("Else a dry run."),
    max_objects: z.number().int().min(1).max(MAX_OBJECTS_CAP).optional().describe(`Default ${DEFAULT_MAX_OBJECTS}.`),
  })
  .strict();

export const deleteObjects = defineTool({
  name: "delete_objects",
  title: "Delete many objects",
  description:
    "Deletes objects by keys or prefix: a dry run (count, sample) unless confirm: true, " +
    "then at most max_objects; the user confirms where the client can.",
  inputSchema,
  outputSchema: z.object({
    bucket: z.string(),
    dry_run: z.boolean(),
    applied: z.boolean(),
    confirmation: z.enum(CONFIRMATIONS),
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
    // keys: [] is a client filling every parameter: not given (so a prefix can be used); beside keys, prefix "" is filler too.
    const keysGiven = given.keys !== undefined && given.keys.length > 0;
    const args: typeof given = {
      ...given,
      keys: keysGiven ? given.keys : undefined,
      prefix: keysGiven && given.prefix === "" ? undefined : given.prefix,
    };
    if ((args.keys === undefined) === (args.prefix === undefined)) {
      throw new ActionableError({
        resource: "keys",
        code: "InvalidParameter",
        message: "Give either keys (exact keys) or prefix, exactly one of them.",
        hint: 'call again with keys: ["a.txt", …] or prefix: "logs/2023/".',
      });
    }
    const max = args.max_objects ?? DEFAULT_MAX_OBJECTS;
    const { keys, more } = await select(args, max, ctx);
    const where =
      args.prefix !== undefined
        ? `${s3Uri(args.bucket_name, args.prefix)}*`
        : `${keys.length} listed key(s) in s3://${args.bucket_name}`;
    const base = {
      bucket: args.bucket_name,
      matched: keys.length,
      more_remaining: more,
      deleted_count: 0,
      deleted: [],
      failed: [],
      applied: false,
      confirmation: "not_asked" as Confirmation,
    };
    if (keys.length === 0)
      return textOutput(`Nothing matches ${where}; nothing deleted.`, { ...base, dry_run: true, sample: [] });

    const sample = keys.slice(0, SAMPLE);
    if (args.dry_run || args.confirm !== true) {
      const why = args.dry_run ? "Dry run" : "Dry run (no confirm: true)";
      const next =
        "call delete_objects again with the same arguments and confirm: true (dry_run false) to delete them.";
      return textOutput(
        `${why}: ${keys.length}${more ? "+" : ""} object(s) would be deleted from ${where}, e.g. ${sample.join(", ")}. Nothing was deleted. Next: ${next}`,
        { ...base, dry_run: true, sample, next },
      );
    }
    // The user confirms where the client can ask; elsewhere the model's confirm: true stands.
    const confirmation = await ctx.confirmWithUser(
      "delete",
      `Delete ${keys.length} object(s) from ${where}? This cannot be undone in an unversioned bucket.`,
    );
    if (confirmation === "declined" || confirmation === "cancelled") {
      const { lead, next } = NOT_CONFIRMED[confirmation];
      // A real run the user stopped: not a dry run.
      return textOutput(
        `${lead}: nothing was deleted from ${where} (${keys.length}${more ? "+" : ""} object(s), e.g. ${sample.join(", ")}). Next: ${next}`,
        { ...base, dry_run: false, confirmation, sample, next },
      );
    }
    const out = await ctx.storage.deleteObjects(args.bucket_name, keys, ctx.signal);
    const failed = out.failed.slice(0, LISTED);
    const text =
      `Deleted ${out.deleted.length} of ${keys.length} object(s) from ${where}` +
      (out.deleted.some((d) => d.delete_marker)
        ? " (versioned bucket: delete markers added, older versions kept)"
        : "") +
      (failed.length
        ? `; ${out.failed.length} failed, e.g. ${failed
            .slice(0, 5)
            .map((f) => `${f.key}: ${f.code}`)
            .join("; ")}`
        : "") +
      (more ? `. More objects match: call again to delete the next ${max}.` : ".");
    const next = more ? `call delete_objects again with the same arguments to delete the next ${max}.` : undefined;
    return textOutput(text, {
      ...base,
      dry_run: false,
      applied: true,
      confirmation,
      sample: [],
      deleted_count: out.deleted.length,
      deleted: out.deleted.slice(0, LISTED).map((d) => d.key),
      failed,
      next,
    });
  },
});

async function select(
  args: z.output<typeof inputSchema>,
  max: number,
  ctx: ToolContext,
): Promise<{ keys: string[]; more: boolean }> {
  if (args.keys) return { keys: [...new Set(args.keys)].slice(0, max), more: new Set(args.keys).size > max };
  return ctx.storage.listKeys(args.bucket_name, args.prefix ?? "", max, ctx.signal);
}
