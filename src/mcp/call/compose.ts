/**
 * A sequence of steps around a last one, as Hono's compose or the SDK's
 * composeMiddleware: each step gets the call and `next` (the rest of the
 * sequence) and may act before it, after it, around it (try/finally), or
 * instead of it (by not calling it). Calling `next` twice is a bug, refused.
 */
export type Step<C, R> = (call: C, next: () => Promise<R>) => Promise<R>;

export function compose<C, R>(steps: readonly Step<C, R>[], last: (call: C) => Promise<R>): (call: C) => Promise<R> {
  return (call) => {
    let reached = -1;
    const dispatch = (i: number): Promise<R> => {
      if (i <= reached) return Promise.reject(new Error("a call step called next() twice"));
      reached = i;
      const step = steps[i];
      return step ? step(call, () => dispatch(i + 1)) : last(call);
    };
    return dispatch(0);
  };
}
