import { createHash, randomBytes } from "node:crypto";
import { link, mkdir, open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { ActionableError } from "../errors.ts";
import { memoryPacer } from "../memory.ts";
import type { CheckedPath } from "./sandbox.ts";
import { localError } from "./source.ts";

const WRITE_BATCH = 1024 * 1024;

export interface WriteResult {
  bytes: number;
  sha256: string;
}

/**
 * Streams `chunks` into a temp file created exclusively beside the target, then
 * moves it into place: rename when overwriting (a symlink is replaced, never
 * followed), link when not (fails if the file appeared meanwhile). On any
 * failure the temp file is removed and the target is untouched.
 */
export async function writeFileAtomically(
  target: CheckedPath,
  chunks: AsyncIterable<Uint8Array>,
  opts: { overwrite: boolean; signal?: AbortSignal },
): Promise<WriteResult> {
  const dir = dirname(target.path);
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    throw localError(target.given, err, "write");
  }
  const temp = join(dir, `.${basename(target.path).slice(0, 100)}.${randomBytes(6).toString("hex")}.partial`);
  let handle;
  try {
    handle = await open(temp, "wx", 0o644);
  } catch (err) {
    throw localError(target.given, err, "write");
  }
  let moved = false;
  try {
    const hash = createHash("sha256");
    const pace = memoryPacer();
    const out = handle;
    // Network chunks are small (~64 KiB): gather 1 MiB and write it with one writev.
    let batch: Uint8Array[] = [];
    let batched = 0;
    const flush = async () => {
      const { bytesWritten } = await out.writev(batch);
      // A short write is rare on a regular file; finish it plainly.
      if (bytesWritten < batched) {
        const rest = Buffer.concat(batch).subarray(bytesWritten);
        for (let w = 0; w < rest.length; ) w += (await out.write(rest, w, rest.length - w)).bytesWritten;
      }
      batch = [];
      batched = 0;
    };
    let bytes = 0;
    for await (const chunk of chunks) {
      opts.signal?.throwIfAborted();
      hash.update(chunk);
      batch.push(chunk);
      batched += chunk.length;
      if (batched >= WRITE_BATCH) await flush();
      bytes += chunk.length;
      pace(chunk.length);
    }
    if (batched > 0) await flush();
    opts.signal?.throwIfAborted();
    await handle.close();
    handle = undefined;
    await moveIntoPlace(temp, target, opts.overwrite);
    moved = true;
    return { bytes, sha256: hash.digest("hex") };
  } catch (err) {
    throw err instanceof ActionableError || (err as Error).name === "AbortError" ? err : localError(target.given, err, "write");
  } finally {
    await handle?.close().catch(() => {});
    if (!moved) await unlink(temp).catch(() => {});
  }
}

async function moveIntoPlace(temp: string, target: CheckedPath, overwrite: boolean): Promise<void> {
  if (overwrite) {
    await rename(temp, target.path);
    return;
  }
  try {
    // link() never replaces: EEXIST if something is at the target by now.
    await link(temp, target.path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw existsError(target.given);
    // File systems without hard links: check, then rename (a narrow race remains there).
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "EMLINK") {
      const exists = await open(target.path, "r").then((h) => h.close().then(() => true), () => false);
      if (exists) throw existsError(target.given);
      await rename(temp, target.path);
      return;
    }
    throw err;
  }
  await unlink(temp);
}

export function existsError(given: string): ActionableError {
  return new ActionableError({
    resource: given,
    code: "LocalFileExists",
    message: "A file already exists at local_path; it was left untouched.",
    hint: "call again with overwrite: true to replace it, or choose another local_path.",
  });
}
