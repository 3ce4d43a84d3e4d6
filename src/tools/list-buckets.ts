import { z } from "zod";
import { visibleBuckets } from "../storage/index.ts";
import { MAX_BUCKETS } from "../tool-kit/limits.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

export { MAX_BUCKETS };

export const listBuckets = defineTool({
  name: "list_buckets",
  title: "List buckets",
  description: `Lists buckets, max_buckets (≤ ${MAX_BUCKETS}) a call. Start here.`,
  inputSchema: z
    .object({
      prefix: z.string().max(63).optional().describe("Name prefix."),
      max_buckets: z.number().int().min(1).max(MAX_BUCKETS).optional().describe(`Default ${MAX_BUCKETS}.`),
      continuation_token: z.string().min(1).max(1024).optional().describe("From the previous page."),
    })
    .strict(),
  outputSchema: z.object({
    buckets: z.array(z.object({ name: z.string(), creation_date: z.string().nullable() })),
    count: z.number(),
    next_continuation_token: z.string().nullable(),
    source: z.enum(["store", "configured"]),
    next: z.string().optional(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  writesToStore: false,
  async handler(args, ctx) {
    const page = await visibleBuckets(
      ctx.storage,
      ctx.configuredBuckets,
      {
        maxBuckets: args.max_buckets ?? MAX_BUCKETS,
        ...(args.prefix ? { prefix: args.prefix } : {}),
        ...(args.continuation_token ? { continuationToken: args.continuation_token } : {}),
      },
      ctx.signal,
    );
    const buckets = page.buckets.filter((b) => ctx.bucketAllowed(b.name));
    const note =
      page.from === "configured"
        ? "These credentials may not list buckets (ListBuckets: AccessDenied); these are the configured buckets (--bucket) that exist."
        : undefined;
    const next = page.next_continuation_token
      ? `call list_buckets again with continuation_token "${page.next_continuation_token}"${args.prefix ? " and the same prefix" : ""}.`
      : undefined;
    const lines = buckets.map((b) => `${b.name}\t${b.creation_date ?? "-"}`);
    const text = [
      buckets.length === 0 ? "No buckets." : `${buckets.length} bucket(s):\n${lines.join("\n")}`,
      ...(note ? [note] : []),
      ...(next ? [`More buckets follow: ${next}`] : []),
    ].join("\n");
    return textOutput(text, {
      buckets,
      count: buckets.length,
      next_continuation_token: page.next_continuation_token,
      source: page.from,
      next,
    });
  },
});
