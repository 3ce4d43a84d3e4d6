import { expect, test } from "bun:test";
import { callGuard } from "../../../../src/transports/edge/call-guard.ts";
import { caller, edgeOf } from "./edge-request.ts";

test("a tools/call outside the caller's scopes is 403 naming the scope; other messages pass", async () => {
  const refusedCalls: string[] = [];
  const rules = {
    missingScope: (name: string) => (name === "delete_object" ? ("delete" as const) : undefined),
    refusedCall: (_c: unknown, name: string, _a: unknown, code: string) => void refusedCalls.push(`${name} ${code}`),
  };
  const guard = callGuard(rules, { scopeName: (s) => `s3:${s}`, header: (extra = "") => `Bearer${extra}` });
  const message = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "delete_object", arguments: {} } };
  const refused = await guard(edgeOf({}, { caller: caller as never, message: message as never }));
  expect(refused?.status).toBe(403);
  expect(refused?.headers.get("www-authenticate")).toContain('scope="s3:delete"');
  expect(refusedCalls).toEqual(["delete_object InsufficientScope"]);
  const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
  expect(await guard(edgeOf({}, { caller: caller as never, message: list as never }))).toBeUndefined();
});
