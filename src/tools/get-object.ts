import { z } from "zod";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import { downloadMember, memberReader } from "../tool-kit/archive-member.ts";
import { DEFAULT_MAX_CONTENT_SIZE, MAX_CONTENT_SIZE_CAP } from "../tool-kit/limits.ts";
import { objectUri, readWindow } from "../tool-kit/object-window.ts";
import { archiveMember, bucketName, objectKey, versionId } from "../tool-kit/schemas.ts";
import { type ContentBlock, defineTool, type ToolContext, textOutput } from "../tool-kit/types.ts";

export { DEFAULT_MAX_CONTENT_SIZE, MAX_CONTENT_SIZE_CAP };

const inputSchema = z
  .object({
    bucket_name: bucketName,
    object_key: objectKey,
    version_id: versionId.optional(),
    mode: z
      .enum(["read", "download"], {
        error: 'mode must be "read" (return the content) or "download" (save to local_path)',
      })
      .optional()
      .describe("Default read."),
    local_path: z
      .string()
      .min(1, "local_path must not be empty")
      .max(4096)
      .optional()
      .describe('Download: e.g. "./out/report.pdf".'),
    max_content_size: z
      .number()
      .int("max_content_size must be a whole number of bytes")
      .min(1, "max_content_size must be at least 1")
      .max(
        MAX_CONTENT_SIZE_CAP,
        `max_content_size must be at most ${MAX_CONTENT_SIZE_CAP} (10 MiB); use mode "download" for larger objects`,
      )
      .optional()
      .describe(`Read: default ${DEFAULT_MAX_CONTENT_SIZE}.`),
    overwrite: z.boolean().optional().describe("Download: replace an existing file."),
    offset: z
      .number()
      .int("offset must be a whole number of bytes")
      .min(0, "offset must be at least 0")
      .optional()
      .describe("Read: first byte."),
    include_binary: z.boolean().optional().describe("Read: binary as base64."),
    archive_member: archiveMember.optional(),
  })
  .strict();

const outputSchema = z.object({
  bucket: z.string(),
  key: z.string(),
  mode: z.enum(["read", "download"]),
  version_id: z.string().nullable(),
  content_type: z.string().nullable(),
  size: z.number(),
  etag: z.string().nullable(),
  last_modified: z.string().nullable(),
  encryption: z
    .object({ algorithm: z.string(), kms_key_id: z.string().optional(), customer_algorithm: z.string().optional() })
    .nullable()
    .optional(),
  returned_bytes: z.number().optional(),
  truncated: z.boolean().optional(),
  encoding: z.enum(["utf-8", "base64", "none"]).optional(),
  offset: z.number().optional(),
  next_offset: z.number().nullable().optional(),
  local_path: z.string().optional(),
  bytes: z.number().optional(),
  sha256: z.string().optional(),
  text: z.string().optional(),
  archive_member: z.string().optional(),
  next: z.string().optional().describe("The next call, when there is more."),
});

type Args = z.output<typeof inputSchema>;
type Result = z.output<typeof outputSchema>;

export const getObject = defineTool({
  name: "get_object",
  title: "Get object",
  description:
    'Reads an object: mode "read" (default) gives text or an image, max_content_size bytes from offset (next_offset: more); ' +
    '"download" saves it whole to local_path, with its sha256.',
  inputSchema,
  outputSchema,
  // Not read-only: download mode writes local files (and may replace one with overwrite).
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  group: "read",
  // A download can run long; a read is bounded by max_content_size.
  handsBack: (args) => args.mode === "download",
  writesToStore: false,
  localFiles: (args) => args.mode === "download",
  remoteNote:
    'On this remote server mode "download" is off (a path would name the server\'s disk): for whole objects, give the user a presign_url link.',
  // Read mode holds the bytes, their text or base64, and the serialized answer at once.
  heldBytes: (args) => ((args.mode ?? "read") === "read" ? 4 * (args.max_content_size ?? DEFAULT_MAX_CONTENT_SIZE) : 0),
  async handler(args, ctx) {
    const mode = args.mode ?? "read";
    if (mode === "download") return download(args, ctx);
    // overwrite: false is its default, which clients that fill in every parameter send: it does not apply, and is no mistake.
    for (const [name, given] of [
      ["local_path", args.local_path],
      ["overwrite", args.overwrite === false ? undefined : args.overwrite],
    ] as const) {
      if (given !== undefined) {
        throw new ActionableError({
          resource: name,
          code: "InvalidParameter",
          message: `${name} is only used with mode "download".`,
          hint: `add mode: "download" to save the object to a file, or leave ${name} out to read the content.`,
        });
      }
    }
    return read(args, ctx);
  },
});

async function read(args: Args, ctx: ToolContext) {
  const max = args.max_content_size ?? DEFAULT_MAX_CONTENT_SIZE;
  // Text goes out twice (content and structuredContent.text): each copy gets half the budget.
  // A member of an archive object is read through its own reader: the same windows, budgets and presentation.
  const source = args.archive_member
    ? {
        ...ctx,
        storage: await memberReader(ctx.storage, address(args), args.archive_member, max, args.offset ?? 0, ctx.signal),
      }
    : ctx;
  const window = await readWindow(source, address(args), max, args.offset ?? 0, ctx.contentBudget / 2);
  const { meta, cutToFit, start, nextOffset } = window;
  // Binary bytes only when asked: most clients hand them to the model as base64 text, and some abort on them (README, Clients).
  const withheld = window.shown.kind === "binary" && !args.include_binary;
  const shown = withheld ? ({ kind: "omitted", returnedBytes: 0, encoding: "none" } as const) : window.shown;
  const truncated = window.truncated || withheld;
  const uri = `${s3Uri(args.bucket_name, args.object_key)}${args.archive_member ? `!${args.archive_member}` : ""}`;
  const next =
    nextOffset !== null
      ? `call again with offset ${nextOffset} for the next part, or use mode "download" with a local_path for the whole object.`
      : withheld
        ? `the bytes are binary: use mode "download" with a local_path to save it, presign_url for a link, or call again with include_binary: true to receive them as a base64 resource.`
        : cutToFit
          ? `one response carries at most about ${ctx.contentBudget / 2} bytes of text or ${ctx.contentBudget} of base64 (what MCP clients can read); use mode "download" with a local_path for the whole object.`
          : meta.size > MAX_CONTENT_SIZE_CAP || max >= MAX_CONTENT_SIZE_CAP
            ? // No read can hold it whole: a larger max_content_size cannot help.
              `it is larger than one read returns (${MAX_CONTENT_SIZE_CAP} bytes): use mode "download" with a local_path, or presign_url for a link.`
            : `call again with max_content_size ${Math.max(meta.size, max + 1)} (at most ${MAX_CONTENT_SIZE_CAP}; binary content also needs include_binary: true) or use mode "download" with a local_path for the whole object.`;
  const summary =
    `${uri}: ${meta.size} bytes, ${meta.content_type ?? "unknown type"}` +
    (meta.version_id ? `, version ${meta.version_id}` : "") +
    (meta.encryption ? `, encrypted (${meta.encryption.algorithm})` : "") +
    (withheld
      ? `. Binary content not included; ${next}`
      : truncated
        ? `. TRUNCATED: ${shown.kind === "omitted" ? "binary content omitted" : `bytes ${start}-${start + shown.returnedBytes - 1} shown`}; ${next}`
        : ".");
  const link = objectUri(args.bucket_name, args.object_key);
  const content: ContentBlock[] = [];
  if (shown.kind === "text") content.push({ type: "text", text: shown.text });
  else if (shown.kind === "image") content.push({ type: "image", data: shown.base64, mimeType: shown.mimeType });
  else if (shown.kind === "binary")
    content.push({ type: "resource", resource: { uri: link, mimeType: shown.mimeType, blob: shown.base64 } });
  content.push({ type: "text", text: summary });
  // The whole object, for clients that open links (resources/read pages it the same way).
  if (truncated && ctx.resourceLinks && !args.archive_member)
    content.push({
      type: "resource_link",
      uri: link,
      name: args.object_key,
      ...(meta.content_type ? { mimeType: meta.content_type } : {}),
      size: meta.size,
    });
  const structured: Result = {
    bucket: args.bucket_name,
    key: args.object_key,
    ...(args.archive_member ? { archive_member: args.archive_member } : {}),
    mode: "read",
    ...meta,
    returned_bytes: shown.returnedBytes,
    truncated,
    encoding: shown.encoding,
    offset: start,
    next_offset: nextOffset,
    // Clients that hand the model only structuredContent when a tool declares an outputSchema still show it the text.
    ...(shown.kind === "text" ? { text: shown.text } : {}),
    ...(truncated ? { next } : {}),
  };
  return { content, structured };
}

async function download(args: Args, ctx: ToolContext) {
  if (args.local_path === undefined) {
    throw new ActionableError({
      resource: "local_path",
      code: "MissingParameter",
      message: 'mode "download" needs local_path, the file to save the object to.',
      hint:
        'call again with local_path, e.g. "./downloads/' +
        (args.object_key.split("/").pop() || "object") +
        '", or use mode "read".',
    });
  }
  if (args.offset !== undefined && args.offset !== 0) {
    throw new ActionableError({
      resource: "offset",
      code: "InvalidParameter",
      message: 'offset is only used with mode "read"; a download saves the whole object.',
      hint: "leave offset out, or use mode read to page through the object.",
    });
  }
  const overwrite = args.overwrite ?? false;
  // Check the target before fetching anything: a refused path costs no transfer.
  const target = await ctx.files.checkDownloadTarget(args.local_path, overwrite, ctx.call);
  if (args.archive_member) {
    const { written, meta } = await downloadMember(ctx, address(args), args.archive_member, target, overwrite);
    const structured: Result = {
      bucket: args.bucket_name,
      key: args.object_key,
      archive_member: args.archive_member,
      mode: "download",
      ...meta,
      local_path: written.path,
      bytes: written.bytes,
      sha256: written.sha256,
    };
    return textOutput(
      `Saved ${args.archive_member} from s3://${args.bucket_name}/${args.object_key} to ${written.path}: ${written.bytes} bytes, sha256 ${written.sha256}.`,
      structured,
    );
  }
  let sink: ((done: number) => void) | undefined;
  const download = await ctx.storage.openObjectDownload(address(args), ctx.signal, {
    onProgress: (received) => sink?.(received),
  });
  const { meta } = download;
  sink = ctx.progress.start(
    meta.size >= 0 ? meta.size : undefined,
    `downloading s3://${args.bucket_name}/${args.object_key}`,
  );
  let written;
  try {
    written = await ctx.files.writeDownload(
      target,
      {
        size: download.size,
        fill: (write, have) => download.deliver(write, undefined, have),
        check: download.check,
        ...(download.resume ? { resume: download.resume } : {}),
      },
      { overwrite, signal: ctx.signal, holder: ctx.call },
    );
  } finally {
    download.discard(); // a refused target must not keep the connection
  }
  const structured: Result = {
    bucket: args.bucket_name,
    key: args.object_key,
    mode: "download",
    ...meta,
    size: written.bytes, // verified against the Content-Length (or a checksum) on the way
    local_path: written.path,
    bytes: written.bytes,
    sha256: written.sha256,
  };
  const version = meta.version_id ? ` (version ${meta.version_id})` : "";
  return textOutput(
    `Saved s3://${args.bucket_name}/${args.object_key}${version} to ${written.path}: ${written.bytes} bytes, sha256 ${written.sha256}.`,
    structured,
  );
}

function address(args: Args) {
  return { bucket: args.bucket_name, key: args.object_key, ...(args.version_id ? { versionId: args.version_id } : {}) };
}
