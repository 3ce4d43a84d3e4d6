/**
 * One promise per event-loop turn, settled in the turn's check phase (setImmediate). HTTP requests that arrive in the
 * same poll phase wait on it, then start their work together: their S3 requests leave in one burst, as the calls that
 * arrive in one stdin chunk do. Started one callback at a time, interleaved with Bun's handling of each request, the
 * same work costs markedly more CPU per S3 request (BENCH_ONLY=remote). The wait is less than one loop turn.
 */
let turn: Promise<void> | undefined;

export function nextTurn(): Promise<void> {
  return (turn ??= new Promise<void>((resolve) =>
    setImmediate(() => {
      turn = undefined;
      resolve();
    }),
  ));
}
