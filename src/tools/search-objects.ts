import { z } from "zod";
import { Slots } from "../bulk/engine.ts";
import { excludeList, globList, pathFilter } from "../bulk/filters.ts";
import { listAll } from "../bulk/listing.ts";
import { finderFor, type LineMatch, REGEX_ENGINE } from "../content/line-search.ts";
import {
  LARGE_AT_ONCE,
  type ObjectOutcome,
  type ObjectSearch,
  SEARCH_AT_ONCE,
  SEARCH_WINDOW,
  SMALL_BYTES_AT_ONCE,
  SMALL_OBJECT_BYTES,
  searchObject,
} from "../content/search.ts";
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import { memoryPacer } from "../runtime/memory.ts";
import type { ObjectInfo } from "../storage/index.ts";
import { bucketName } from "../tool-kit/schemas.ts";
import { defineTool, type ToolContext, textOutput } from "../tool-kit/types.ts";

const DEFAULT_MATCHES = 100;
const MAX_MATCHES = 1000;
const DEFAULT_MAX_OBJECT_BYTES = 256 * 1024 * 1024;
/** A full collection after this much text searched: the decoded text and the windows' bodies are garbage at once (the search of BENCH_ONLY=look holds its peak with it). */
const SEARCHED_BYTES_PER_COLLECTION = 8 * 1024 * 1024;

type Found = LineMatch & { key: string };

export const searchObjects = defineTool({
  name: "search_objects",
  title: "Search inside objects",
  description:
    "Finds lines containing a text (or RE2 regex) in the objects under a prefix, like grep -r (gzip decompressed, binary skipped).",
  inputSchema: z
    .object({
      bucket_name: bucketName,
      prefix: z.string().max(1024).optional().describe('Default "": the whole bucket.'),
      pattern: z.string().min(1).max(1000).describe("Text to find."),
      regex: z.boolean().optional().describe("pattern is RE2."),
      ignore_case: z.boolean().optional().describe("Either case."),
      include: globList("prefix").optional(),
      exclude: excludeList.optional(),
      max_matches: z.number().int().min(1).max(MAX_MATCHES).optional().describe(`Default ${DEFAULT_MATCHES}.`),
      context_lines: z.number().int().min(0).max(3).optional().describe("Lines around each match."),
      max_object_bytes: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe(`Skip larger objects (default ${DEFAULT_MAX_OBJECT_BYTES / 1024 / 1024} MiB).`),
      continuation_token: z.string().min(1).max(4096).optional().describe("From a truncated result."),
    })
    .strict(),
  outputSchema: z.object({
    bucket: z.string(),
    prefix: z.string(),
    matches: z.array(
      z.object({
        key: z.string(),
        line: z.number(),
        text: z.string(),
        before: z.array(z.string()).optional(),
        after: z.array(z.string()).optional(),
      }),
    ),
    objects_with_matches: z.array(z.object({ key: z.string(), matching_lines: z.number() })),
    objects_searched: z.number(),
    objects_skipped: z.object({ binary: z.number(), too_large: z.number() }),
    bytes_read: z.number(),
    regex_engine: z.string().optional(),
    truncated: z.boolean(),
    continuation_token: z.string().optional(),
    next: z.string().optional(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  group: "read",
  handsBack: true,
  writesToStore: false,
  // Small objects' bytes in flight, and one window and the next per large object.
  heldBytes: () => SMALL_BYTES_AT_ONCE + LARGE_AT_ONCE * 2 * SEARCH_WINDOW,
  async handler(args, ctx) {
    const prefix = args.prefix ?? "";
    const resume = resumeFrom(args.continuation_token);
    const wanted = pathFilter(args.include, args.exclude);
    // Searches still running when the result is complete are stopped.
    const done = new AbortController();
    const onAbort = () => done.abort(ctx.signal.reason);
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    const search: ObjectSearch = {
      storage: ctx.storage,
      bucket: args.bucket_name,
      find: finderOf(args),
      context: args.context_lines ?? 0,
      maxObjectBytes: args.max_object_bytes ?? DEFAULT_MAX_OBJECT_BYTES,
      signal: done.signal,
      pace: memoryPacer(SEARCHED_BYTES_PER_COLLECTION),
    };
    const run = new SearchRun(search, args.max_matches ?? DEFAULT_MATCHES, ctx);
    try {
      if (resume && resume.line < Number.MAX_SAFE_INTEGER)
        run.start({ key: resume.key, size: 0, etag: null }, resume.line);
      for await (const object of listAll(ctx.storage, args.bucket_name, prefix, ctx.signal, resume?.key)) {
        if (!wanted(object.key.slice(prefix.length))) continue;
        while (run.inFlight.length >= SEARCH_AT_ONCE) if (!(await run.take())) break;
        if (run.stoppedAt) break;
        run.start(object);
      }
      while (run.inFlight.length > 0 && !run.stoppedAt) await run.take();
    } finally {
      ctx.signal.removeEventListener("abort", onAbort);
      done.abort();
    }
    const { matches, withMatches, skipped, searched } = run;
    const token = run.stoppedAt ? tokenFor(run.stoppedAt) : undefined;
    const next = token
      ? `call search_objects again with the same arguments and continuation_token "${token}" for more matches.`
      : undefined;
    const where = s3Uri(args.bucket_name, prefix);
    const shown = matches.slice(0, 20).map((m) => `${m.key}:${m.line}: ${m.text.slice(0, 200)}`);
    const text =
      `${matches.length} matching line(s) in ${withMatches.length} of ${searched} object(s) searched under ${where}` +
      (skipped.binary || skipped.too_large
        ? ` (skipped: ${skipped.binary} binary, ${skipped.too_large} over max_object_bytes)`
        : "") +
      (shown.length ? `:\n${shown.join("\n")}${matches.length > 20 ? "\n…" : ""}` : ".") +
      (next ? `\nStopped early. Next: ${next}` : "");
    return textOutput(text, {
      bucket: args.bucket_name,
      prefix,
      matches,
      objects_with_matches: withMatches,
      objects_searched: searched,
      objects_skipped: skipped,
      bytes_read: run.bytesRead,
      ...(args.regex ? { regex_engine: REGEX_ENGINE } : {}),
      truncated: token !== undefined,
      ...(token ? { continuation_token: token, next } : {}),
    });
  },
});

/** The pattern as a line finder: text, or RE2 (a bad expression is the caller's to fix). */
function finderOf(args: { pattern: string; regex?: boolean; ignore_case?: boolean }): ObjectSearch["find"] {
  try {
    return finderFor(args.pattern, args.regex ?? false, args.ignore_case ?? false);
  } catch (err) {
    throw new ActionableError({
      resource: "pattern",
      code: "InvalidParameter",
      message: `pattern is not an RE2 regular expression: ${(err as Error).message}.`,
      hint: "fix the expression (RE2 has no lookaround or backreferences), or search for it as text with regex: false.",
    });
  }
}

/**
 * One call's searches, in key order, SEARCH_AT_ONCE read at once, and what
 * they found; each takes at most what is still wanted when it starts. Small
 * objects are held within their bytes' budget (KiB units), large ones a few
 * at a time.
 */
class SearchRun {
  readonly matches: Found[] = [];
  readonly withMatches: { key: string; matching_lines: number }[] = [];
  readonly skipped = { binary: 0, too_large: 0 };
  searched = 0;
  bytesRead = 0;
  #textBytes = 0;
  /** Where the result stopped (full, or at what a client can read): the next call resumes after it. */
  stoppedAt: { key: string; line: number } | undefined;
  readonly inFlight: { key: string; outcome: Promise<ObjectOutcome> }[] = [];
  readonly #smallBytes = new Slots(SMALL_BYTES_AT_ONCE / 1024);
  readonly #large = new Slots(LARGE_AT_ONCE);

  constructor(
    readonly search: ObjectSearch,
    readonly maxMatches: number,
    readonly ctx: Pick<ToolContext, "contentBudget" | "progress">,
  ) {}

  start(object: Pick<ObjectInfo, "key" | "size" | "etag">, afterLine = 0): void {
    const max = this.maxMatches - this.matches.length;
    const searchIt = () => searchObject(this.search, object, max, afterLine);
    const outcome =
      object.etag && object.size <= SMALL_OBJECT_BYTES
        ? this.#smallBytes.use(searchIt, Math.max(1, Math.ceil(object.size / 1024)))
        : this.#large.use(searchIt);
    outcome.catch(() => {});
    this.inFlight.push({ key: object.key, outcome });
  }

  /** The first search's outcome, gathered; false once the result is complete. */
  async take(): Promise<boolean> {
    const { outcome } = this.inFlight.shift()!;
    const got = await outcome;
    this.bytesRead += got.bytes;
    if (got.kind === "binary" || got.kind === "too_large") this.skipped[got.kind]++;
    if (got.kind !== "searched") return true;
    this.searched++;
    for (const m of got.matches) {
      const size =
        m.text.length + (m.before ?? []).concat(m.after ?? []).reduce((n, l) => n + l.length, 0) + got.key.length + 40;
      // Full, or the answer would pass what a client can read: the next call resumes at this line.
      if (this.matches.length >= this.maxMatches || this.#textBytes + size > this.ctx.contentBudget / 2) {
        this.stoppedAt = { key: got.key, line: m.line - 1 };
        break;
      }
      this.#textBytes += size;
      this.matches.push({ key: got.key, ...m });
    }
    if (!this.stoppedAt && got.full) this.stoppedAt = { key: got.key, line: got.lastLine! };
    if (got.matchingLines > 0) this.withMatches.push({ key: got.key, matching_lines: got.matchingLines });
    if (!this.stoppedAt && this.matches.length >= this.maxMatches)
      this.stoppedAt = { key: got.key, line: Number.MAX_SAFE_INTEGER };
    this.ctx.progress.report(
      this.searched,
      undefined,
      `search_objects: ${this.searched} object(s) searched, ${this.matches.length} match(es)`,
    );
    return this.stoppedAt === undefined;
  }
}

/** A token naming the object and the last line reported in it: the next call starts at the line after. */
function tokenFor(at: { key: string; line: number }): string {
  return Buffer.from(`s:${JSON.stringify([at.key, at.line])}`, "utf8").toString("base64url");
}

function resumeFrom(token: string | undefined): { key: string; line: number } | undefined {
  if (token === undefined) return undefined;
  const text = Buffer.from(token, "base64url").toString("utf8");
  try {
    const [key, line] = JSON.parse(text.slice(2)) as [unknown, unknown];
    if (text.startsWith("s:") && typeof key === "string" && typeof line === "number") return { key, line };
  } catch {}
  throw new ActionableError({
    resource: "continuation_token",
    code: "InvalidParameter",
    message: "This continuation_token was not made by search_objects.",
    hint: "pass the continuation_token of the previous result as it is, or leave it out to start over.",
  });
}
