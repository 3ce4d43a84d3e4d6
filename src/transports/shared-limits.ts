/**
 * Per-caller limits counted in a Redis or Valkey that every replica shares
 * (--state-url), so N replicas enforce one limit, not N of them. The same two
 * limits as caller-limits.ts: a token bucket (requests per second, a burst)
 * and requests in flight. One script per request does both, on the store's
 * own clock (TIME), atomically: one round trip on the request's path; the
 * in-flight slot is given back without waiting. A slot is a member of a
 * sorted set scored by when it lapses, so a replica that dies holding some
 * cannot lock its callers out for longer than SLOT_MS.
 *
 * When the store is down or slow (no answer within ANSWER_MS), the request is
 * judged by this replica's own count instead (fail open to the per-replica
 * limits), with one warning line a minute.
 */

import { createHash, randomBytes } from "node:crypto";
import type { RedisClient } from "bun";
import type { Logger } from "../runtime/log.ts";
import { type Admission, CallerLimits, type LimitSettings } from "./caller-limits.ts";

/** Longest a request holds a shared in-flight slot (a longer one stops counting; a dead replica's lapse). */
const SLOT_MS = 10 * 60_000;
/** The store answers within this, or the request is judged here. */
const ANSWER_MS = 250;
const WARN_EVERY_MS = 60_000;

// KEYS: the caller's bucket hash, the caller's in-flight set. ARGV: perSecond, burst, inFlight, slot id, slot ms.
// Returns {1} admitted, or {0, retryAfterS, "rate" | "inflight"}.
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local perSecond, burst, inFlight = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if inFlight > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= inFlight then return {0, 1, 'inflight'} end
end
if perSecond > 0 then
  local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
  local tokens = tonumber(state[1]) or burst
  local at = tonumber(state[2]) or now
  tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * perSecond)
  if tokens < 1 then
    redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
    redis.call('PEXPIRE', KEYS[1], math.ceil(burst / perSecond * 1000) + 1000)
    return {0, math.max(1, math.ceil((1 - tokens) / perSecond)), 'rate'}
  end
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - 1), 'at', now)
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst / perSecond * 1000) + 1000)
end
if inFlight > 0 then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[4])
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[5]))
end
return {1}
`;
const SCRIPT_SHA = createHash("sha1").update(SCRIPT).digest("hex");
// KEYS: the caller's in-flight set. ARGV: slot id, slot ms. A held slot, scored by when it lapses on the store's clock.
const HOLD_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
`;

export interface Limiter {
  admit(caller: string): Promise<Admission> | Admission;
  /** Holds an in-flight slot without asking (a running job) until the release is called. */
  hold(caller: string): () => void;
}

/** The limits the config asks for: shared through the state store when there is one, else this replica's own. */
export function callerLimitsFor(
  config: { limits: LimitSettings; stateUrl?: string | undefined },
  log: Logger,
): Limiter {
  return config.stateUrl
    ? new SharedCallerLimits(config.limits, config.stateUrl, log)
    : new CallerLimits(config.limits);
}

export class SharedCallerLimits implements Limiter {
  readonly #client: RedisClient;
  readonly #local: CallerLimits;
  #warnedAt = -Infinity;
  #dialedAt = -Infinity;

  constructor(
    readonly settings: LimitSettings,
    url: string,
    private readonly log: Logger,
  ) {
    // No offline queue: while the store is away a command fails at once (and the request is judged here) instead of
    // piling up to be replayed, stale, when it is back. The client reconnects by itself once connected; a first
    // connection that failed (the store down at start) is tried again from #dial.
    // Bun's global, not an import of "bun": the bench's Node build of the server must still bundle.
    this.#client = new Bun.RedisClient(url, {
      connectionTimeout: 2_000,
      autoReconnect: true,
      enableOfflineQueue: false,
    });
    this.#local = new CallerLimits(settings);
    this.#dial();
  }

  async admit(caller: string): Promise<Admission> {
    const { perSecond, burst, inFlight } = this.settings;
    if (perSecond === 0 && inFlight === 0) return { ok: true, release: () => {} };
    const slot = randomBytes(9).toString("base64url");
    const keys = [`smcp:rate:${caller}`, `smcp:inflight:${caller}`];
    const args = ["2", ...keys, String(perSecond), String(burst), String(inFlight), slot, String(SLOT_MS)];
    // By its SHA1 (the script is not sent with every request); sent whole once when the store does not have it yet.
    const asked = this.#client
      .send("EVALSHA", [SCRIPT_SHA, ...args])
      .catch((err: Error) =>
        /NOSCRIPT/.test(String(err?.message)) ? this.#client.send("EVAL", [SCRIPT, ...args]) : Promise.reject(err),
      );
    let answer: unknown;
    try {
      answer = await withTimeout(asked, ANSWER_MS);
    } catch (err) {
      this.#warn(err);
      this.#dial();
      // Judged here; a slot the store grants after all is given back, or it would count against the caller until it lapses.
      if (inFlight > 0)
        asked.then(
          (late) => (late as [number])[0] === 1 && this.#client.send("ZREM", [keys[1]!, slot]).catch(() => {}),
          () => {},
        );
      return this.#local.admit(caller);
    }
    const [ok, retryAfterS, which] = answer as [number, number?, string?];
    if (ok !== 1)
      return {
        ok: false,
        retryAfterS: Number(retryAfterS ?? 1),
        reason: which === "inflight" ? `${inFlight} requests in flight` : `${perSecond} requests per second`,
      };
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released || inFlight === 0) return;
        released = true;
        // Given back without waiting; a lost one lapses after SLOT_MS.
        this.#client.send("ZREM", [keys[1]!, slot]).catch(() => {});
      },
    };
  }

  /**
   * A slot held for a running job: renewed before it lapses for as long as the job runs (a dead replica's lapse after
   * SLOT_MS), counted here too while the store cannot answer.
   */
  hold(caller: string): () => void {
    if (this.settings.inFlight === 0) return () => {};
    const slot = randomBytes(9).toString("base64url");
    const key = `smcp:inflight:${caller}`;
    const add = () => {
      this.#client.send("EVAL", [HOLD_SCRIPT, "1", key, slot, String(SLOT_MS)]).catch((err) => this.#warn(err));
    };
    add();
    const renew = setInterval(add, SLOT_MS / 2);
    renew.unref?.();
    const local = this.#local.hold(caller);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      clearInterval(renew);
      local();
      this.#client.send("ZREM", [key, slot]).catch(() => {});
    };
  }

  /** For /healthz: whether the store is connected now. */
  stateStore(): "connected" | "unreachable" {
    return this.#client.connected ? "connected" : "unreachable";
  }

  close(): void {
    this.#client.close();
  }

  /** Connects when not connected, at most once a second. */
  #dial(): void {
    const now = performance.now();
    if (this.#client.connected || now - this.#dialedAt < 1_000) return;
    this.#dialedAt = now;
    this.#client.connect().catch(() => {});
  }

  #warn(err: unknown): void {
    const now = performance.now();
    if (now - this.#warnedAt < WARN_EVERY_MS) return;
    this.#warnedAt = now;
    this.log.warn(
      `state store (--state-url) not answering (${(err as Error)?.message ?? err}): per-caller limits are counted by this replica alone until it answers`,
    );
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)),
  );
  work.catch(() => {});
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
