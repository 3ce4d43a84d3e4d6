import { z } from "zod";
import { defineTool, textOutput } from "./types.ts";

export const listBuckets = defineTool({
  name: "list_buckets",
  title: "List buckets",
  description:
    "Lists every bucket the configured credentials can see, with its creation date. Start here to find out which buckets exist. Takes no parameters.",
  inputSchema: z.object({}).strict(),
  outputSchema: z.object({
    buckets: z.array(z.object({ name: z.string(), creation_date: z.string().nullable() })),
    count: z.number().int(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  writesToStore: false,
  async handler(_args, ctx) {
    const buckets = (await ctx.storage.listBuckets(ctx.signal)).filter((b) => ctx.bucketAllowed(b.name));
    const lines = buckets.map((b) => `${b.name}\t${b.creation_date ?? "-"}`);
    const text = buckets.length === 0 ? "No buckets." : `${buckets.length} bucket(s):\n${lines.join("\n")}`;
    return textOutput(text, { buckets, count: buckets.length });
  },
});

