/**
 * Hashes of a file computed on another thread, reading back (from the page
 * cache) the prefix the writer reports written: the file's SHA-256 and the
 * object's own checks (the MD5 of its ETag, its checksums). Hashing on the
 * thread that receives the download bounds its speed (the download shapes of
 * `npm run bench`). Algorithms added later start from the file's first byte,
 * and run alone until they reach the others. The worker's code is inline (a
 * Blob URL), so the compiled binary needs no extra entry point.
 */

const WORKER_SOURCE = `
const { createHash } = require("node:crypto");
const { readSync } = require("node:fs");
const { crc32 } = require("node:zlib");
const buffer = Buffer.allocUnsafe(1024 * 1024);
// One lane a set of algorithms, each at its own position in the file.
const lanes = [];
const hasherOf = (a) => {
  if (a !== "crc32") return createHash(a);
  let crc = 0;
  return { update: (b) => void (crc = crc32(b, crc)), digest: () => (crc >>> 0).toString(16).padStart(8, "0") };
};
self.onmessage = (event) => {
  const { fd, add, upTo, done } = event.data;
  try {
    if (add) lanes.push({ at: 0, hashes: add.map((a) => [a, hasherOf(a)]) });
    for (let behind = lanes.filter((l) => l.at < upTo); behind.length > 0; behind = lanes.filter((l) => l.at < upTo)) {
      const from = Math.min(...behind.map((l) => l.at));
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, upTo - from), from);
      if (read <= 0) throw new Error("the file ended at " + from + " while hashing up to " + upTo);
      const bytes = buffer.subarray(0, read);
      for (const lane of behind) {
        if (lane.at !== from) continue;
        for (const [, h] of lane.hashes) h.update(bytes);
        lane.at += read;
      }
    }
    if (done) {
      const hex = {};
      for (const lane of lanes) for (const [a, h] of lane.hashes) hex[a] = h.digest("hex");
      postMessage({ hex });
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
  /** Computes these too, from the file's first byte. */
  add(algorithms: readonly string[]): void;
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
  worker.postMessage({ fd, add: algorithms, upTo: 0, done: false });
  return {
    upTo(bytes) {
      if (bytes <= reported || failed) return;
      reported = bytes;
      worker.postMessage({ fd, upTo: bytes, done: false });
    },
    add(more) {
      worker.postMessage({ fd, add: more, upTo: reported, done: false });
    },
    async digests(total) {
      if (failed) throw failed;
      const result = await new Promise<{ hex?: Record<string, string>; error?: string }>((resolve) => {
        settle = resolve;
        worker.postMessage({ fd, upTo: total, done: true });
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
