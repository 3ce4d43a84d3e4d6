/**
 * Hashes of a file computed on another thread, reading back (from the page
 * cache) the prefix the writer reports written: the file's SHA-256 and the
 * object's own checks (the MD5 of its ETag, its checksums). Hashing on the
 * thread that receives the download bounds its speed (the download shapes of
 * `npm run bench`). The worker's code is inline (a Blob URL), so the compiled
 * binary needs no extra entry point.
 */

const WORKER_SOURCE = `
const { createHash } = require("node:crypto");
const { readSync } = require("node:fs");
const { crc32 } = require("node:zlib");
const buffer = Buffer.allocUnsafe(1024 * 1024);
let hashes;
let crc;
let at = 0;
self.onmessage = (event) => {
  const { fd, algorithms, upTo, done } = event.data;
  try {
    if (!hashes) {
      hashes = algorithms.filter((a) => a !== "crc32").map((a) => [a, createHash(a)]);
      if (algorithms.includes("crc32")) crc = 0;
    }
    while (at < upTo) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, upTo - at), at);
      if (read <= 0) throw new Error("the file ended at " + at + " while hashing up to " + upTo);
      const bytes = buffer.subarray(0, read);
      for (const [, h] of hashes) h.update(bytes);
      if (crc !== undefined) crc = crc32(bytes, crc);
      at += read;
    }
    if (done) {
      const hex = {};
      for (const [a, h] of hashes) hex[a] = h.digest("hex");
      if (crc !== undefined) hex.crc32 = (crc >>> 0).toString(16).padStart(8, "0");
      postMessage({ hex, bytes: at });
    }
  } catch (err) {
    postMessage({ error: String(err && err.message || err) });
  }
};
`;

let workerUrl: string | undefined;

export interface FileHasher {
  /** The file's first `bytes` are written: hash them. */
  upTo(bytes: number): void;
  /** The digests (hex, by algorithm) of the first `total` bytes, once they are hashed. */
  digests(total: number): Promise<Record<string, string>>;
  /** Stops the thread (it never reads after this resolves). */
  stop(): Promise<void>;
}

/** `algorithms`: node:crypto names, or crc32. */
export function startFileHasher(fd: number, algorithms: readonly string[]): FileHasher {
  workerUrl ??= URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
  const worker = new Worker(workerUrl);
  let failed: Error | undefined;
  let settle: ((result: { hex?: Record<string, string>; error?: string }) => void) | undefined;
  const closed = new Promise<void>((resolve) => worker.addEventListener("close", () => resolve(), { once: true }));
  worker.onmessage = (event: MessageEvent<{ hex?: Record<string, string>; error?: string }>) => {
    if (event.data.error) failed ??= new Error(event.data.error);
    settle?.(event.data);
  };
  worker.onerror = (event) => {
    failed ??= new Error(event.message);
    settle?.({ error: event.message });
  };
  let reported = 0;
  return {
    upTo(bytes) {
      if (bytes <= reported || failed) return;
      reported = bytes;
      worker.postMessage({ fd, algorithms, upTo: bytes, done: false });
    },
    async digests(total) {
      if (failed) throw failed;
      const result = await new Promise<{ hex?: Record<string, string>; error?: string }>((resolve) => {
        settle = resolve;
        worker.postMessage({ fd, algorithms, upTo: total, done: true });
      });
      if (result.error || !result.hex) throw new Error(result.error ?? "the hashing thread gave no digest");
      return result.hex;
    },
    async stop() {
      worker.terminate();
      // A read under way finishes before the thread ends; never leave one running on a file about to be closed.
      await Promise.race([closed, Bun.sleep(2000)]);
    },
  };
}
