/**
 * Keeps a big transfer's memory flat. JavaScriptCore lets its heap grow with
 * the allocation rate before it collects, so streaming a 1 GiB object peaked
 * at 163 MB where 256 MiB peaked at 129 MB (scripts/bench/results.md). A full
 * collection after every 64 MiB moved holds the peak level whatever the size,
 * for a few milliseconds each time.
 */
const EVERY_BYTES = 64 * 1024 * 1024;

export function memoryPacer(everyBytes = EVERY_BYTES): (bytes: number) => void {
  const gc = (globalThis as { Bun?: { gc(sync: boolean): void } }).Bun?.gc;
  let moved = 0;
  return (bytes) => {
    moved += bytes;
    if (moved < everyBytes || !gc) return;
    moved = 0;
    gc(true);
  };
}
