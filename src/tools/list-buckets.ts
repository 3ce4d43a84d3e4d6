import { z } from "zod";
import { defineTool, textOutput } from "./types.ts";

/** The most buckets one answer lists (AWS allows up to 10,000 an account by default; a broken store may send any number). */
export const MAX_BUCKETS = 1000;

export const listBuckets = defineTool({
  name: "list_buckets",
  title: "List buckets",
  description:
    `Lists the buckets these credentials can see (at most ${MAX_BUCKETS}), with creation dates. Start here.`,
  inputSchema: z.object({}).strict(),
  outputSchema: z.object({
    buckets: z.array(z.object({ name: z.string(), creation_date: z.string().nullable() })),
    count: z.number(),
    truncated: z.boolean().optional(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  writesToStore: false,
  async handler(_args, ctx) {
    const all = (await ctx.storage.listBuckets(ctx.signal)).filter((b) => ctx.bucketAllowed(b.name));
    const buckets = all.slice(0, MAX_BUCKETS);
    const lines = buckets.map((b) => `${b.name}\t${b.creation_date ?? "-"}`);
    const more = all.length > buckets.length ? `\nThe store listed ${all.length} buckets; only the first ${MAX_BUCKETS} are shown.` : "";
    const text = buckets.length === 0 ? "No buckets." : `${buckets.length} bucket(s):\n${lines.join("\n")}${more}`;
    return textOutput(text, { buckets, count: buckets.length, ...(more ? { truncated: true } : {}) });
  },
});

