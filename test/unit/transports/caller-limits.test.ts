import { expect, test } from "bun:test";
import { CallerLimits } from "../../../src/transports/caller-limits.ts";

test("a burst, then the rate; Retry-After says when the next request fits; callers are apart", () => {
  let now = 0;
  const limits = new CallerLimits({ perSecond: 2, burst: 3, inFlight: 0 }, () => now);
  for (let i = 0; i < 3; i++) expect(limits.admit("a").ok).toBe(true);
  const over = limits.admit("a");
  expect(over).toMatchObject({ ok: false, retryAfterS: 1, reason: "2 requests per second" });
  expect(limits.admit("b").ok).toBe(true);
  now += 500; // one token back
  expect(limits.admit("a").ok).toBe(true);
  expect(limits.admit("a").ok).toBe(false);
});

test("requests in flight: held until released, each release once", () => {
  const limits = new CallerLimits({ perSecond: 0, burst: 0, inFlight: 2 });
  const first = limits.admit("a");
  const second = limits.admit("a");
  expect(limits.admit("a")).toMatchObject({ ok: false, reason: "2 requests in flight" });
  if (!first.ok || !second.ok) throw new Error("admitted");
  first.release();
  first.release();
  expect(limits.admit("a").ok).toBe(true);
  expect(limits.admit("a").ok).toBe(false);
});

test("off: 0 admits everything", () => {
  const limits = new CallerLimits({ perSecond: 0, burst: 0, inFlight: 0 });
  for (let i = 0; i < 1000; i++) expect(limits.admit("a").ok).toBe(true);
});
