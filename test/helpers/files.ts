import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Directories made by tempDir: removed once the tests are over (test/setup/preload.ts); a run left ~2 GB behind in /tmp, and runs add up. */
const made: string[] = [];

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A fresh real (symlink-free) temporary directory, removed when the tests end. */
export function tempDir(tag: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `store-mcp-${tag}-`)));
  made.push(dir);
  return dir;
}

/** Deterministic pseudo-random bytes (fast, not compressible). */
export function randomBytes(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed >>> 0 || 1;
  const view = new DataView(out.buffer);
  let i = 0;
  for (; i + 4 <= size; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    view.setUint32(i, x >>> 0);
  }
  for (; i < size; i++) out[i] = i & 0xff;
  return out;
}

export function sha256(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}
