/**
 * Per-caller limits in remote mode, so one runaway agent cannot starve the
 * rest: requests per second (a token bucket: `perSecond` refilled, up to
 * `burst` at once) and requests in flight (held until the answer is
 * written). Over either, the request is answered 429 with Retry-After
 * before any work is done. 0 turns a limit off. Callers are told apart by
 * their identity (a token's label, a JWT's sub), not by address: a team
 * behind one proxy shares an address.
 */
export interface LimitSettings {
  perSecond: number;
  burst: number;
  inFlight: number;
}

export type Admission = { ok: true; release: () => void } | { ok: false; retryAfterS: number; reason: string };

interface CallerState {
  tokens: number;
  at: number;
  inFlight: number;
}

/** Idle callers are forgotten once this many are known (a full bucket and nothing in flight is the fresh state anyway). */
const MAX_KNOWN = 10_000;

export class CallerLimits {
  readonly #callers = new Map<string, CallerState>();

  constructor(
    readonly settings: LimitSettings,
    private readonly now: () => number = () => performance.now(),
  ) {}

  admit(caller: string): Admission {
    const { perSecond, burst, inFlight } = this.settings;
    const at = this.now();
    let state = this.#callers.get(caller);
    if (!state) {
      if (this.#callers.size >= MAX_KNOWN) this.#forgetIdle(at);
      state = { tokens: burst, at, inFlight: 0 };
      this.#callers.set(caller, state);
    }
    if (perSecond > 0) {
      state.tokens = Math.min(burst, state.tokens + ((at - state.at) / 1000) * perSecond);
      state.at = at;
    }
    if (inFlight > 0 && state.inFlight >= inFlight)
      return { ok: false, retryAfterS: 1, reason: `${inFlight} requests in flight` };
    if (perSecond > 0) {
      if (state.tokens < 1)
        return {
          ok: false,
          retryAfterS: Math.max(1, Math.ceil((1 - state.tokens) / perSecond)),
          reason: `${perSecond} requests per second`,
        };
      state.tokens -= 1;
    }
    state.inFlight++;
    let released = false;
    const held = state;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        held.inFlight--;
      },
    };
  }

  /** Holds an in-flight slot without asking (a running job of a request already admitted) until released. */
  hold(caller: string): () => void {
    if (this.settings.inFlight === 0) return () => {};
    let state = this.#callers.get(caller);
    if (!state) {
      state = { tokens: this.settings.burst, at: this.now(), inFlight: 0 };
      this.#callers.set(caller, state);
    }
    state.inFlight++;
    const held = state;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.inFlight--;
    };
  }

  #forgetIdle(at: number): void {
    const { perSecond, burst } = this.settings;
    for (const [caller, state] of this.#callers) {
      const full = perSecond === 0 || state.tokens + ((at - state.at) / 1000) * perSecond >= burst;
      if (state.inFlight === 0 && full) this.#callers.delete(caller);
    }
  }
}
