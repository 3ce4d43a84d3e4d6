/**
 * SHA-256 of a file computed on another thread, reading back (from the page
 * cache) the prefix the writer reports written. Hashing on the thread that
 * receives the download would bound its speed on loopback (the download shapes
 * of `npm run bench`). The worker's code is inline (a Blob URL), so the
 * compiled binary needs no extra entry point.
 */

const WORKER_SOURCE = `
const { createHash } = require("node:crypto");
const { readSync } = require("node:fs");
const hash = createHash("sha256");
const buffer = Buffer.allocUnsafe(1024 * 1024);
let at = 0;
self.onmessage = (event) => {
  const { fd, upTo, done } = event.data;
  try {
    while (at < upTo) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, upTo - at), at);
      if (read <= 0) throw new Error("the file ended at " + at + " while hashing up to " + upTo);
      hash.update(buffer.subarray(0, read));
      at += read;
    }
    if (done) postMessage({ sha256: hash.digest("hex"), bytes: at });
  } catch (err) {
    postMessage({ error: String(err && err.message || err) });
  }
};
`;

let workerUrl: string | undefined;

export interface FileHasher {
  /** The file's first `bytes` are written: hash them. */
  upTo(bytes: number): void;
  /** The hash of the first `total` bytes, once they are hashed. */
  digest(total: number): Promise<string>;
  /** Stops the thread (it never reads after this resolves). */
  stop(): Promise<void>;
}

export function startFileHasher(fd: number): FileHasher {
  workerUrl ??= URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
  const worker = new Worker(workerUrl);
  let failed: Error | undefined;
  let settle: ((result: { sha256?: string; error?: string }) => void) | undefined;
  const closed = new Promise<void>((resolve) => worker.addEventListener("close", () => resolve(), { once: true }));
  worker.onmessage = (event: MessageEvent<{ sha256?: string; error?: string }>) => {
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
      worker.postMessage({ fd, upTo: bytes, done: false });
    },
    async digest(total) {
      if (failed) throw failed;
      const result = await new Promise<{ sha256?: string; error?: string }>((resolve) => {
        settle = resolve;
        worker.postMessage({ fd, upTo: total, done: true });
      });
      if (result.error || !result.sha256) throw new Error(result.error ?? "the hashing thread gave no digest");
      return result.sha256;
    },
    async stop() {
      worker.terminate();
      // A read under way finishes before the thread ends; never leave one running on a file about to be closed.
      await Promise.race([closed, Bun.sleep(2000)]);
    },
  };
}
