import { expect, test } from "bun:test";
import { bodyGuard } from "../../../../src/transports/edge/body-guard.ts";
import { edgeOf } from "./edge-request.ts";

test("too large, not JSON, a batch: each refused with its code; one message is kept and noted", async () => {
  const guard = bodyGuard(100);
  expect((await guard(edgeOf({ body: "x".repeat(200), headers: { "content-length": "200" } })))?.status).toBe(413);
  expect((await guard(edgeOf({ body: "not json" })))?.status).toBe(400);
  const batch = edgeOf({ body: JSON.stringify([{ id: 1 }, { id: 2 }]) });
  expect((await guard(batch))?.status).toBe(400);
  expect(batch.notes).toEqual(["batch of 2 refused"]);
  const call = edgeOf({ body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } }) });
  expect(await guard(call)).toBeUndefined();
  expect(call.message?.method).toBe("tools/call");
  expect(call.notes).toEqual(["tools/call x"]);
});
