import { z } from "zod";
import { defineTool, textOutput } from "./types.ts";

/** The most buckets one answer lists (AWS allows up to 10,000 an account by default; a broken store may send any number). */
export const MAX_BUCKETS = 1000;

export const listBuckets = defineTool({
  name: "list_buckets",
  title: "List buckets",
  description:
    `Lists the buckets the configured credentials can see, with their creation dates (at most ${MAX_BUCKETS}; truncated is true when there are more). Start here to find out which buckets exist. Takes no parameters.`,
  inputSchema: z.object({}).strict(),
  outputSchema: z.object({
    buckets: z.array(z.object({ name: z.string(), creation_date: z.string().nullable() })),
    count: z.number().int(),
    truncated: z.boolean().optional().describe(`True when the store listed more than ${MAX_BUCKETS} buckets and only the first ${MAX_BUCKETS} are returned.`),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
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

