import { z } from "zod";
import { stalledListing } from "../storage/index.ts";
import { objectUri } from "../tool-kit/object-window.ts";
import { bucketName } from "../tool-kit/schemas.ts";
import { type ContentBlock, defineTool, textOutput } from "../tool-kit/types.ts";

/** Objects of a page that also get a resource_link content item. */
export const LINKED_OBJECTS = 100;

export const MAX_KEYS = 1000;

export const listObjects = defineTool({
  name: "list_objects",
  title: "List objects",
  description: `Lists objects under prefix, max_keys (≤ ${MAX_KEYS}) a call; while is_truncated, pass next_continuation_token on.`,
  inputSchema: z
    .object({
      bucket_name: bucketName,
      prefix: z.string().max(1024).optional().describe('e.g. "logs/2024/".'),
      max_keys: z
        .number()
        .int("max_keys must be a whole number")
        .min(1, "max_keys must be at least 1")
        .max(MAX_KEYS, `max_keys must be at most ${MAX_KEYS}`)
        .optional()
        .describe(`Default ${MAX_KEYS}.`),
      continuation_token: z.string().min(1).optional().describe("From the previous page."),
      delimiter: z.string().min(1).max(16).optional().describe('Usually "/": list one folder level.'),
    })
    .strict(),
  outputSchema: z.object({
    bucket: z.string(),
    prefix: z.string().nullable(),
    objects: z.array(
      z.object({
        key: z.string(),
        size: z.number(),
        last_modified: z.string().nullable(),
        etag: z.string().nullable(),
        storage_class: z.string().nullable(),
      }),
    ),
    common_prefixes: z.array(z.string()),
    is_truncated: z.boolean(),
    next_continuation_token: z.string().nullable(),
    warning: z.string().optional(),
    next: z.string().optional().describe("The next call, when there is more."),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  writesToStore: false,
  async handler(args, ctx) {
    const page = await ctx.storage.listObjects(
      {
        bucket: args.bucket_name,
        maxKeys: args.max_keys ?? MAX_KEYS,
        ...(args.prefix ? { prefix: args.prefix } : {}),
        ...(args.delimiter ? { delimiter: args.delimiter } : {}),
        ...(args.continuation_token ? { continuationToken: args.continuation_token } : {}),
      },
      ctx.signal,
    );
    const where = `s3://${args.bucket_name}/${args.prefix ?? ""}`;
    // A store that hands back the token it was given would have the model page forever.
    if (page.is_truncated && args.continuation_token && page.next_continuation_token === args.continuation_token)
      throw stalledListing(where);
    const tokenless = page.is_truncated && !page.next_continuation_token;
    const next =
      page.is_truncated && !tokenless
        ? `call list_objects again with continuation_token "${page.next_continuation_token}" (and the same bucket_name, prefix and delimiter).`
        : undefined;
    const warning = page.store_ignored_max_keys
      ? "the store sent more than max_keys; this page was cut to max_keys, so paging on may skip some keys (narrow the prefix instead)."
      : tokenless
        ? "the store said more objects follow but gave no continuation token, so this listing cannot go on; narrow the prefix to see the rest."
        : undefined;
    const lines = [
      `${page.objects.length} object(s)${page.common_prefixes.length ? ` and ${page.common_prefixes.length} prefix(es)` : ""} in ${where}:`,
      ...page.common_prefixes.map((p) => `${p}\t(prefix)`),
      ...page.objects.map(
        (o) =>
          `${o.key}\t${o.size} B\t${o.last_modified ?? "-"}${o.storage_class && o.storage_class !== "STANDARD" ? `\t${o.storage_class}` : ""}`,
      ),
      next
        ? `More objects follow: ${next}`
        : tokenless
          ? "More objects follow, but the store gave no way to page on (see the warning)."
          : "End of listing.",
      ...(warning ? [`Warning: ${warning}`] : []),
    ];
    const { store_ignored_max_keys: _ignored, ...structured } = page;
    const out = textOutput(lines.join("\n"), {
      bucket: args.bucket_name,
      prefix: args.prefix ?? null,
      ...structured,
      warning,
      next,
    });
    // Links a client can open (resources/read); the first LINKED_OBJECTS only, so a 1,000-key page does not double in size.
    const links: ContentBlock[] = page.objects
      .slice(0, ctx.resourceLinks ? LINKED_OBJECTS : 0)
      .map((o) => ({ type: "resource_link", uri: objectUri(args.bucket_name, o.key), name: o.key, size: o.size }));
    return { ...out, content: [...out.content, ...links] };
  },
});
