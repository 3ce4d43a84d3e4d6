import { expect, test } from "bun:test";
import { limitGuard } from "../../../../src/transports/edge/limit-guard.ts";
import type { Limiter } from "../../../../src/transports/shared-limits.ts";
import { caller, edgeOf } from "./edge-request.ts";

test("over the limit: 429 with Retry-After and noted; under it: the slot is held for the answer", async () => {
  const over: Limiter = { admit: () => ({ ok: false, retryAfterS: 3, reason: "rate" }), hold: () => () => {} };
  const edge = edgeOf({}, { caller: caller as never });
  const refused = await limitGuard(over)(edge);
  expect(refused?.status).toBe(429);
  expect(refused?.headers.get("retry-after")).toBe("3");
  expect(edge.notes).toEqual(["rate limited"]);
  const release = () => {};
  const under: Limiter = { admit: () => ({ ok: true, release }), hold: () => () => {} };
  const admitted = edgeOf({}, { caller: caller as never });
  expect(await limitGuard(under)(admitted)).toBeUndefined();
  expect(admitted.held).toEqual([release]);
});
