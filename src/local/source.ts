import type { FileHandle } from "node:fs/promises";
import { localError } from "./errors.ts";
import { openForReading } from "./reading.ts";
import type { AllowedDirs, WalkMode } from "./sandbox.ts";

export interface UploadSource {
  size: number;
  /** Its modification time when opened: with the path and size, what a kept upload of it is known by. */
  mtimeMs: number;
  /** The real path that was opened. */
  path: string;
  /** Reads at `position` into `into`; returns the bytes read, 0 at the end. Read errors name the given path. */
  readAt(into: Uint8Array, position: number): Promise<number>;
  /** Bytes `start` to `end` (exclusive) as a Blob read from the same descriptor (never the path again). */
  slice(start: number, end: number): Blob;
  close(): Promise<void>;
}

/**
 * Opens a file for reading at offsets (each upload part reads its own range).
 * The sandbox opened it beneath an allowed directory; from here on only the
 * descriptor is used, so nothing done to the path afterwards matters.
 */
export async function openUploadSource(given: string, allowed: AllowedDirs, mode: WalkMode): Promise<UploadSource> {
  const { handle, size, mtimeMs, path } = await openForReading(given, allowed, mode);
  return uploadSourceOf(handle, size, mtimeMs, path, given);
}

/** An upload source over a descriptor already opened (and checked) by the sandbox or a walk. */
export function uploadSourceOf(
  handle: FileHandle,
  size: number,
  mtimeMs: number,
  path: string,
  given: string,
): UploadSource {
  let closed: Promise<void> | undefined;
  return {
    size,
    mtimeMs,
    path,
    readAt: async (into, position) => {
      try {
        return (await handle.read(into, 0, into.length, position)).bytesRead;
      } catch (err) {
        throw localError(given, err, "read");
      }
    },
    // Bun reads a descriptor-backed Blob at its offsets when it is sent, without holding it in JavaScript memory.
    slice: (start, end) => Bun.file(handle.fd).slice(start, end),
    close: () => (closed ??= handle.close().catch(() => {})),
  };
}
