import { z } from "zod";
import { pathFilter } from "../bulk/filters.ts";
import { listAll } from "../bulk/listing.ts";
import {
  continuationToken,
  DEFAULT_KEYS_SCANNED,
  isoTime,
  keyFromToken,
  maxKeysScanned,
  scanEnd,
  tokenAfter,
} from "../bulk/scan.ts";
import { s3Uri } from "../runtime/errors.ts";
import type { ObjectInfo } from "../storage/index.ts";
import { bucketName, storageClass } from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

const DEFAULT_RESULTS = 100;
const MAX_RESULTS = 1000;

export const findObjects = defineTool({
  name: "find_objects",
  title: "Find objects",
  description: "Finds objects under a prefix by key glob, size, time and storage class.",
  inputSchema: z
    .object({
      bucket_name: bucketName,
      prefix: z.string().max(1024).optional().describe('e.g. "logs/".'),
      glob: z
        .string()
        .min(1)
        .max(1024)
        .optional()
        .describe('e.g. "**/*.parquet" ("**" crosses folders; without "/": the name).'),
      min_size: z.number().int().min(0).optional().describe("Bytes, at least."),
      max_size: z.number().int().min(0).optional().describe("Bytes, at most."),
      modified_after: isoTime("modified_after").optional(),
      modified_before: isoTime("modified_before").optional(),
      storage_class: storageClass.optional(),
      max_results: z.number().int().min(1).max(MAX_RESULTS).optional().describe(`Default ${DEFAULT_RESULTS}.`),
      max_keys_scanned: maxKeysScanned.optional(),
      continuation_token: continuationToken.optional(),
    })
    .strict(),
  outputSchema: z.object({
    bucket: z.string(),
    prefix: z.string(),
    matches: z.array(
      z.object({
        key: z.string(),
        size: z.number(),
        last_modified: z.string().nullable(),
        storage_class: z.string().nullable(),
        etag: z.string().nullable(),
      }),
    ),
    ...scanEnd,
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  handsBack: true,
  writesToStore: false,
  async handler(args, ctx) {
    const prefix = args.prefix ?? "";
    const wanted = matcher(args);
    const maxResults = args.max_results ?? DEFAULT_RESULTS;
    const maxScanned = args.max_keys_scanned ?? DEFAULT_KEYS_SCANNED;
    const matches: ObjectInfo[] = [];
    let scanned = 0;
    let last: string | undefined;
    let truncated = false;
    for await (const object of listAll(
      ctx.storage,
      args.bucket_name,
      prefix,
      ctx.signal,
      keyFromToken(args.continuation_token),
    )) {
      if (scanned >= maxScanned || matches.length >= maxResults) {
        truncated = true;
        break;
      }
      scanned++;
      last = object.key;
      if (wanted(object)) matches.push(object);
      if (scanned % 10_000 === 0)
        ctx.progress.report(
          scanned,
          undefined,
          `find_objects: ${scanned.toLocaleString("en-US")} keys scanned, ${matches.length} found`,
        );
    }
    const token = truncated && last !== undefined ? tokenAfter(last) : undefined;
    const next = token
      ? `call find_objects again with the same arguments and continuation_token "${token}" to scan on.`
      : undefined;
    const where = s3Uri(args.bucket_name, prefix);
    const text =
      `${matches.length} object(s) found under ${where} (${scanned.toLocaleString("en-US")} keys scanned)` +
      (matches.length
        ? `: ${matches
            .slice(0, 20)
            .map((m) => `${m.key} (${m.size} bytes, ${m.last_modified ?? "?"})`)
            .join("; ")}${matches.length > 20 ? "; …" : ""}`
        : "") +
      (next ? `. Stopped early. Next: ${next}` : ".");
    return textOutput(text, {
      bucket: args.bucket_name,
      prefix,
      matches,
      keys_scanned: scanned,
      truncated,
      ...(token ? { continuation_token: token, next } : {}),
    });
  },
});

function matcher(args: {
  glob?: string;
  min_size?: number;
  max_size?: number;
  modified_after?: string;
  modified_before?: string;
  storage_class?: string;
}) {
  const name = args.glob ? pathFilter([args.glob], undefined) : undefined;
  const after = args.modified_after ? Date.parse(args.modified_after) : undefined;
  const before = args.modified_before ? Date.parse(args.modified_before) : undefined;
  return (o: ObjectInfo): boolean => {
    if (args.min_size !== undefined && o.size < args.min_size) return false;
    if (args.max_size !== undefined && o.size > args.max_size) return false;
    if (args.storage_class && (o.storage_class ?? "STANDARD") !== args.storage_class) return false;
    const t = o.last_modified ? Date.parse(o.last_modified) : Number.NaN;
    if (after !== undefined && !(t > after)) return false;
    if (before !== undefined && !(t < before)) return false;
    return name ? name(o.key) : true;
  };
}
