/**
 * How a download is cut into ranges (ranged.ts): their sizes, how many run
 * at once, and the runner that keeps that many going.
 */

const MiB = 1024 * 1024;
/** The first GET's range: enough to time how fast the store streams. */
export const FIRST_RANGE_SIZE = 2 * MiB;
/**
 * A far store's ranges: this size (the AWS CLI's), this many at once (where
 * each connection is bounded by window / round trip, more connections carry
 * more, up to where more no longer sped the WAN-model download at the same
 * CPU and peak: docs/performance.md's figures). Each range holds at most
 * WRITES_PER_BODY + 1 pieces (ranged.ts: being written, filling) plus what its
 * connection buffers, so memory does not grow with the object (the WAN-model
 * download of `npm run bench`).
 */
export const RANGE_SIZE = 8 * MiB;
export const PARALLEL_RANGES = 16;
/**
 * At most this many ranges for a paced reader (a copy to another store): each range in flight holds up to a range
 * of bytes ahead of what the upload can take, so more ranges raise a copy's peak for little speed (the copy between
 * stores in `npm run bench`, and BENCH_ONLY=ab: three are as fast as four through the WAN model).
 */
export const PACED_RANGES = 3;
/** The parts of [from, total) not in `have` (sorted, apart, [start, end) each): what a resumed download still needs. */
export function missingSpans(
  from: number,
  total: number,
  have: readonly (readonly [number, number])[] = [],
): [number, number][] {
  const out: [number, number][] = [];
  let at = from;
  for (const [start, end] of have) {
    if (end <= at) continue;
    if (start >= total) break;
    if (start > at) out.push([at, start]);
    at = Math.max(at, end);
  }
  if (at < total) out.push([at, total]);
  return out;
}

/**
 * Runs `range` over `spans` ([start, end) each) in RANGE_SIZE steps,
 * `initial` at once and up to `parallel` (one more each time a range ends
 * while `wantsMore`), each started as soon as one ends. The first failure
 * stops the rest; it settles only when every range has.
 */
export async function inParallel(
  spans: readonly [number, number][],
  range: (start: number, end: number) => Promise<void>,
  stop: AbortController,
  parallel: number,
  initial = parallel,
  wantsMore: () => boolean = () => false,
): Promise<void> {
  const steps: [number, number][] = spans.flatMap(([from, total]) =>
    Array.from({ length: Math.ceil((total - from) / RANGE_SIZE) }, (_, i): [number, number] => [
      from + i * RANGE_SIZE,
      Math.min(total, from + (i + 1) * RANGE_SIZE) - 1,
    ]),
  );
  let next = 0;
  let failure: { err: unknown } | undefined;
  const limit = Math.min(parallel, steps.length);
  const workers: Promise<void>[] = [];
  const worker = async () => {
    while (next < steps.length && !failure) {
      const [start, end] = steps[next++]!;
      try {
        await range(start, end);
      } catch (err) {
        failure ??= { err };
        stop.abort(err);
      }
      if (workers.length < limit && next < steps.length && !failure && wantsMore()) workers.push(worker());
    }
  };
  for (let i = 0; i < Math.min(initial, limit); i++) workers.push(worker());
  // Workers may be added while earlier ones run: wait until none is left.
  for (let i = 0; i < workers.length; i++) await workers[i];
  if (failure) throw failure.err;
}
