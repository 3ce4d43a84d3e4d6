import { z } from "zod";
import { ActionableError, s3Uri } from "../errors.ts";
import { fitJsonText } from "../response-budget.ts";
import { present, type Presented } from "./object-content.ts";
import { bucketName, objectKey, versionId } from "./schemas.ts";
import { defineTool, textOutput, type ContentBlock, type ToolContext } from "./types.ts";

/** 1 MB in the spec, read as 1 MiB. */
export const DEFAULT_MAX_CONTENT_SIZE = 1_048_576;
/** The most one read may return into the conversation: 10 MiB. Larger → download mode. */
export const MAX_CONTENT_SIZE_CAP = 10_485_760;

const inputSchema = z
  .object({
    bucket_name: bucketName,
    object_key: objectKey,
    version_id: versionId.optional(),
    mode: z
      .enum(["read", "download"], { error: 'mode must be "read" (return the content) or "download" (save to local_path)' })
      .optional()
      .describe('"read" (default): return the content in the result. "download": stream it to local_path and return only a summary.'),
    local_path: z.string().min(1, "local_path must not be empty").max(4096).optional().describe("Required with mode \"download\": the local file to write, e.g. \"./downloads/report.pdf\". Missing folders are created."),
    max_content_size: z
      .number()
      .int("max_content_size must be a whole number of bytes")
      .min(1, "max_content_size must be at least 1")
      .max(MAX_CONTENT_SIZE_CAP, `max_content_size must be at most ${MAX_CONTENT_SIZE_CAP} (10 MiB); use mode "download" for larger objects`)
      .optional()
      .describe(`Read mode: the most bytes to return, default ${DEFAULT_MAX_CONTENT_SIZE} (1 MiB), at most ${MAX_CONTENT_SIZE_CAP}. Only this many bytes are fetched; a larger object comes back truncated.`),
    overwrite: z.boolean().optional().describe("Download mode: replace an existing file at local_path. Default false: an existing file is never touched."),
  })
  .strict();

const outputSchema = z.object({
  bucket: z.string(),
  key: z.string(),
  mode: z.enum(["read", "download"]),
  version_id: z.string().nullable(),
  content_type: z.string().nullable(),
  size: z.number().describe("Size of the whole object in bytes."),
  etag: z.string().nullable(),
  last_modified: z.string().nullable(),
  returned_bytes: z.number().optional().describe("Read mode: bytes of content in this result."),
  truncated: z.boolean().optional().describe("Read mode: true when not all of the object is returned (larger than max_content_size, or cut to fit one response)."),
  encoding: z.enum(["utf-8", "base64", "none"]).optional().describe("Read mode: how the content is returned (none: binary content omitted)."),
  local_path: z.string().optional().describe("Download mode: the file written."),
  bytes: z.number().optional().describe("Download mode: bytes written."),
  sha256: z.string().optional().describe("Download mode: SHA-256 of the bytes written, hex."),
});

type Args = z.output<typeof inputSchema>;
type Result = z.output<typeof outputSchema>;

export const getObject = defineTool({
  name: "get_object",
  title: "Get object",
  description:
    'Reads an object. mode "read" (default) returns its content: text as text, PNG/JPEG/GIF/WebP as an image, other binary as an embedded resource; ' +
    `only the first max_content_size bytes (default 1 MiB) are fetched, and a larger object comes back with truncated: true. ` +
    'mode "download" streams the whole object to local_path (inside the directories the server may write) and returns its size and sha256; ' +
    "an existing file is kept unless overwrite is true. version_id reads an older version of a versioned object.",
  inputSchema,
  outputSchema,
  // Not read-only: download mode writes local files (and may replace one with overwrite).
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  writesToStore: false,
  // Read mode holds the bytes, their text or base64, and the serialized answer at once.
  heldBytes: (args) => ((args.mode ?? "read") === "read" ? 4 * (args.max_content_size ?? DEFAULT_MAX_CONTENT_SIZE) : 0),
  async handler(args, ctx) {
    ctx.checkBucket(args.bucket_name);
    const mode = args.mode ?? "read";
    if (mode === "download") return download(args, ctx);
    for (const [name, given] of [["local_path", args.local_path], ["overwrite", args.overwrite]] as const) {
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
  const { meta, bytes } = await ctx.storage.readObjectHead(address(args), max, ctx.signal);
  const { shown, cutToFit } = fitToBudget(present(meta.content_type, bytes, meta.size > bytes.length), ctx.contentBudget);
  const truncated = meta.size > bytes.length || cutToFit;
  const uri = s3Uri(args.bucket_name, args.object_key);
  const next = cutToFit
    ? `one response carries at most about ${ctx.contentBudget} bytes of content (what MCP clients can read); use mode "download" with a local_path for the whole object.`
    : `call again with a larger max_content_size (at most ${MAX_CONTENT_SIZE_CAP}) or use mode "download" with a local_path for the whole object.`;
  const summary =
    `${uri}: ${meta.size} bytes, ${meta.content_type ?? "unknown type"}` +
    (meta.version_id ? `, version ${meta.version_id}` : "") +
    (truncated ? `. TRUNCATED: ${shown.kind === "omitted" ? "binary content omitted" : `first ${shown.returnedBytes} bytes shown`}; ${next}` : ".");
  const content: ContentBlock[] = [];
  if (shown.kind === "text") content.push({ type: "text", text: shown.text });
  else if (shown.kind === "image") content.push({ type: "image", data: shown.base64, mimeType: shown.mimeType });
  else if (shown.kind === "binary") content.push({ type: "resource", resource: { uri: encodeURI(uri), mimeType: shown.mimeType, blob: shown.base64 } });
  content.push({ type: "text", text: summary });
  const structured: Result = {
    bucket: args.bucket_name,
    key: args.object_key,
    mode: "read",
    ...meta,
    returned_bytes: shown.returnedBytes,
    truncated,
    encoding: shown.encoding,
  };
  return { content, structured };
}

async function download(args: Args, ctx: ToolContext) {
  if (args.local_path === undefined) {
    throw new ActionableError({
      resource: "local_path",
      code: "MissingParameter",
      message: 'mode "download" needs local_path, the file to save the object to.',
      hint: 'call again with local_path, e.g. "./downloads/' + (args.object_key.split("/").pop() || "object") + '", or use mode "read".',
    });
  }
  const overwrite = args.overwrite ?? false;
  // Check the target before fetching anything: a refused path costs no transfer.
  const target = await ctx.files.checkDownloadTarget(args.local_path, overwrite);
  const { meta, body, discard } = await ctx.storage.openObjectStream(address(args), ctx.signal);
  let written;
  try {
    written = await ctx.files.writeDownload(target, body, { overwrite, signal: ctx.signal });
  } finally {
    discard(); // a refused target must not keep the connection
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
  return textOutput(`Saved s3://${args.bucket_name}/${args.object_key}${version} to ${written.path}: ${written.bytes} bytes, sha256 ${written.sha256}.`, structured);
}

/**
 * Keeps the content within the response budget: text is cut on a character
 * boundary where its JSON form (escapes included) would pass it; an image or
 * binary whose base64 would pass it is omitted, as half of one is of no use.
 */
function fitToBudget(shown: Presented, budget: number): { shown: Presented; cutToFit: boolean } {
  if (shown.kind === "text") {
    const fit = fitJsonText(shown.text, budget);
    if (!fit.cut) return { shown, cutToFit: false };
    return { shown: { ...shown, text: fit.text, returnedBytes: Buffer.byteLength(fit.text, "utf8") }, cutToFit: true };
  }
  if ((shown.kind === "image" || shown.kind === "binary") && shown.base64.length + 2 > budget) {
    return { shown: { kind: "omitted", returnedBytes: 0, encoding: "none" }, cutToFit: true };
  }
  return { shown, cutToFit: false };
}

function address(args: Args) {
  return { bucket: args.bucket_name, key: args.object_key, ...(args.version_id ? { versionId: args.version_id } : {}) };
}
