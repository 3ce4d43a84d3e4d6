/**
 * One bounded window of an object, presented for the model: what get_object
 * read mode returns and what resources/read returns (the same bounds, the
 * same truncation rules, the same checks). Text windows start and end on
 * character boundaries; content is cut to the response budget.
 */
import { ActionableError, s3Uri } from "../runtime/errors.ts";
import type { ObjectAddress, ObjectMeta, Storage } from "../storage/index.ts";
import { fitToBudget, leadingContinuationBytes, present } from "./object-content.ts";
import type { ToolContext } from "./types.ts";

/** What a window is read through: the store, or an archive member's reader (archive-member.ts). */
type WindowSource = Pick<ToolContext, "signal" | "contentBudget"> & { storage: Pick<Storage, "readObjectHead"> };

export interface ObjectWindow {
  meta: ObjectMeta;
  shown: ReturnType<typeof fitToBudget>["shown"];
  /** More of the object exists beyond what is shown (unread, or cut to fit). */
  truncated: boolean;
  /** Cut to fit the response budget (not just the byte limit). */
  cutToFit: boolean;
  /** The first byte shown. */
  start: number;
  /** Where the next text window starts, or null. */
  nextOffset: number | null;
}

/**
 * `s3://bucket/key` with each key segment percent-encoded, so any key (with
 * `#`, `?`, `%`, spaces) makes one URI that parses back to it.
 */
export function objectUri(bucket: string, key: string): string {
  return `s3://${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`;
}

/** The key of an object URI's path part, as objectUri encoded it. */
export function keyOfUriPath(path: string): string {
  return path
    .split("/")
    .map((s) => decodeURIComponent(s))
    .join("/");
}

/** The longest UTF-8 character: a text window of this many bytes always holds one whole. */
const MAX_CHAR_BYTES = 4;

/**
 * `textBudget`: a smaller budget for text, when the caller sends text twice
 * (get_object: content and structuredContent). A text window always moves
 * on: when `max` is too small for the character at `offset` (1-3 bytes of a
 * longer one), the window is widened to hold that character instead of
 * returning nothing with next_offset == offset, which a model would loop on.
 */
export async function readWindow(
  ctx: WindowSource,
  addr: ObjectAddress,
  max: number,
  offset: number,
  textBudget = ctx.contentBudget,
): Promise<ObjectWindow> {
  const window = await readWindowOnce(ctx, addr, max, offset, textBudget);
  const stalled =
    window.shown.kind === "text" && window.truncated && window.shown.returnedBytes === 0 && window.start === offset;
  return stalled && max < MAX_CHAR_BYTES ? readWindowOnce(ctx, addr, MAX_CHAR_BYTES, offset, textBudget) : window;
}

async function readWindowOnce(
  ctx: WindowSource,
  addr: ObjectAddress,
  max: number,
  offset: number,
  textBudget: number,
): Promise<ObjectWindow> {
  const { meta, bytes: fetched } = await ctx.storage
    .readObjectHead(addr, max, ctx.signal, offset)
    .catch((err: unknown) => {
      if (offset > 0 && err instanceof ActionableError && err.code === "InvalidRange") throw pastTheEnd(addr, offset);
      throw err;
    });
  const moreAfter = meta.size > offset + fetched.length;
  let presented = present(meta.content_type, fetched, moreAfter);
  // A window that starts inside a character skips its continuation bytes: text windows start on a character boundary.
  const skip = offset > 0 && presented.kind === "text" ? leadingContinuationBytes(fetched) : 0;
  const bytes = skip ? fetched.subarray(skip) : fetched;
  if (skip) presented = present(meta.content_type, bytes, moreAfter);
  const { shown, cutToFit } = fitToBudget(presented, presented.kind === "text" ? textBudget : ctx.contentBudget);
  const truncated = moreAfter || cutToFit;
  const start = offset + skip;
  return {
    meta,
    shown,
    truncated,
    cutToFit,
    start,
    nextOffset: truncated && shown.kind === "text" ? start + shown.returnedBytes : null,
  };
}

function pastTheEnd(addr: ObjectAddress, offset: number): ActionableError {
  return new ActionableError({
    resource: s3Uri(addr.bucket, addr.key),
    code: "InvalidRange",
    status: 416,
    message: `offset ${offset} is at or past the end of the object.`,
    hint: "call head_object for its size and use a smaller offset; the previous window was the last when next_offset was null.",
  });
}
