import { z } from "zod";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import {
  bucketName,
  cacheControl,
  callEncryption,
  contentType,
  encryptionArgs,
  ifAbsent,
  metadata,
  objectKey,
  sourceBucketName,
  sourceObjectKey,
  storageClass,
  versionId,
} from "../tool-kit/schemas.ts";
import { defineTool, textOutput } from "../tool-kit/types.ts";

export const copyObject = defineTool({
  name: "copy_object",
  // Its result's size is the bytes it moved (elsewhere, as in head_object, a size only describes an object).
  bytesField: "size",
  title: "Copy object",
  description: "Copies an object server-side (across buckets too). REPLACES an existing destination unless if_absent.",
  inputSchema: z
    .object({
      source_bucket: sourceBucketName,
      source_key: sourceObjectKey,
      source_version_id: versionId.optional(),
      bucket_name: bucketName.describe("Destination bucket."),
      object_key: objectKey.describe("Destination key."),
      metadata_directive: z
        .enum(["COPY", "REPLACE"])
        .optional()
        .describe('"COPY" (default): the source\'s type and metadata; "REPLACE": those given.'),
      content_type: contentType.optional().describe("With REPLACE."),
      cache_control: cacheControl.optional().describe("With REPLACE."),
      metadata: metadata.optional().describe("With REPLACE."),
      storage_class: storageClass.optional(),
      if_absent: ifAbsent.optional(),
      ...encryptionArgs,
    })
    .strict(),
  outputSchema: z.object({
    source: z.string(),
    bucket: z.string(),
    key: z.string(),
    size: z.number(),
    etag: z.string().nullable(),
    version_id: z.string().nullable(),
    source_version_id: z.string().nullable(),
    multipart: z.boolean(),
  }),
  // Destructive: it replaces an existing destination (unless if_absent).
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "write",
  handsBack: true,
  writesToStore: true,
  sourceStore: true,
  async handler(args, ctx) {
    // From another store (source_store): streamed through the server.
    const from = ctx.sourceStore;
    const encryption = callEncryption(args);
    const replace = args.metadata_directive === "REPLACE";
    let sink: ((done: number) => void) | undefined;
    const copy = (req: Parameters<typeof ctx.storage.copyObject>[0], signal: AbortSignal) =>
      from
        ? ctx.storage.copyFrom(from.storage, req, signal, (err) => sourceNamed(err, from.name))
        : ctx.storage.copyObject(req, signal);
    const out = await copy(
      {
        source: {
          bucket: args.source_bucket,
          key: args.source_key,
          ...(args.source_version_id ? { versionId: args.source_version_id } : {}),
        },
        bucket: args.bucket_name,
        key: args.object_key,
        metadataDirective: replace ? "REPLACE" : "COPY",
        ...(replace
          ? { contentType: args.content_type, cacheControl: args.cache_control, metadata: args.metadata }
          : {}),
        storageClass: args.storage_class,
        ifAbsent: args.if_absent,
        encryption,
        ...(from ? { sourceStore: from.name } : {}),
        onProgress: (done, total) =>
          (sink ??= ctx.progress.start(total, `copying s3://${args.source_bucket}/${args.source_key}`))(done),
      },
      ctx.signal,
    );
    const source = `${from ? `${from.name}:` : ""}${s3Uri(args.source_bucket, args.source_key)}`;
    const ignored =
      !replace && (args.content_type || args.cache_control || args.metadata)
        ? " (content_type, cache_control and metadata apply only with metadata_directive REPLACE; the source's were kept)"
        : "";
    return textOutput(
      `Copied ${source} (${out.size} bytes${out.multipart ? ", in parts" : ""}${from ? ", streamed between stores and verified" : ""}) to ${s3Uri(args.bucket_name, args.object_key)}${out.version_id ? `, version ${out.version_id}` : ""}${ignored}.`,
      {
        source,
        bucket: args.bucket_name,
        key: args.object_key,
        size: out.size,
        etag: out.etag,
        version_id: out.version_id,
        source_version_id: out.source_version_id,
        multipart: out.multipart,
      },
    );
  },
});

/** An error of the source side of a copy between stores names the source store (the server names the call's own). */
export function sourceNamed(err: unknown, store: string): unknown {
  if (!(err instanceof ActionableError)) return err;
  return new ActionableError({
    resource: `${store}:${err.resource}`,
    code: err.code,
    message: err.message,
    hint: err.hint,
    ...(err.status ? { status: err.status } : {}),
    retryable: err.retryable,
  });
}
