/**
 * One answer's body into a download's sink: its network chunks gathered into
 * pieces at their offsets, each chunk freed once its piece is written
 * (ranged.ts reads every range of a download so).
 */
import { releaseChunks } from "../../runtime/memory.ts";
import type { ErrorContext } from "../errors.ts";
import type { PieceSink } from "../types.ts";
import type { IdleTimer } from "./idle-timer.ts";
import { verifiedBody } from "./integrity.ts";

/** Network chunks (~64-128 KiB) are gathered into pieces of this size: one positional write each. */
const PIECE_SIZE = 256 * 1024;
/** Pieces of one body handed to the sink at once (a copy's pipe holds them; a file writes each at once: pieces.ts). */
const WRITES_PER_BODY = 4;

export type Body = AsyncIterable<Uint8Array> & { destroy?(): void; cancel?(): Promise<void> };

/**
 * Reads one body (exactly `length` bytes when known) into pieces of
 * PIECE_SIZE at their offsets from `start`, up to WRITES_PER_BODY of them
 * being written while the next fills, so the network and the disk work at once.
 */
export async function pump(
  body: Body | undefined,
  start: number,
  length: number | undefined,
  sink: PieceSink,
  ctx: ErrorContext,
  idle: IdleTimer,
  arrived: (bytes: number) => void,
): Promise<void> {
  let offset = start;
  let piece: Uint8Array[] = [];
  let filled = 0;
  const writing: Promise<void>[] = [];
  const hand = async () => {
    if (writing.length >= WRITES_PER_BODY) await writing.shift();
    const chunks = piece;
    // Written, the chunks are garbage (unless the sink kept them): freed now rather than at the next collection.
    const write = sink(offset, chunks).then((kept) => {
      if (kept !== "kept") releaseChunks(chunks);
    });
    write.catch(() => {}); // awaited in turn or at the end
    writing.push(write);
    offset += filled;
    piece = [];
    filled = 0;
  };
  try {
    for await (const chunk of verifiedBody(idle.guard(body), { length, md5: undefined, checksums: [] }, ctx)) {
      arrived(chunk.length);
      piece.push(chunk);
      filled += chunk.length;
      if (filled >= PIECE_SIZE) await hand();
    }
    if (filled > 0) await hand();
  } finally {
    // Never settles with a write of ours still running (a failed body ends the loop, not the writes).
    await Promise.allSettled(writing);
  }
  for (const write of writing) await write;
}
