import { expect, test } from "bun:test";
import { postGuard } from "../../../../src/transports/edge/post-guard.ts";
import { edgeOf } from "./edge-request.ts";

test("only POST carries MCP: GET and DELETE are 405 naming POST", async () => {
  for (const method of ["GET", "DELETE"]) {
    const refused = await postGuard(edgeOf({ method }));
    expect(refused?.status).toBe(405);
    expect(refused?.headers.get("allow")).toBe("POST");
  }
  expect(await postGuard(edgeOf({ method: "POST", body: "{}" }))).toBeUndefined();
});
