import { expect, test } from "bun:test";
import { browserGuard } from "../../../../src/transports/edge/browser-guard.ts";
import type { BrowserChecks } from "../../../../src/transports/http-browser-checks.ts";
import { edgeOf } from "./edge-request.ts";

const checks: BrowserChecks = {
  refusal: (req) => (req.headers.get("origin") === "https://evil.example" ? "Origin not allowed" : undefined),
  cors: (origin): Record<string, string> =>
    origin === "https://app.example" ? { "access-control-allow-origin": origin } : {},
  preflight: () => new Response(null, { status: 204 }),
};

test("a refused Origin is 403; a preflight is answered; an allowed origin's CORS headers stay for the answer", async () => {
  expect((await browserGuard(checks)(edgeOf({ headers: { origin: "https://evil.example" } })))?.status).toBe(403);
  expect((await browserGuard(checks)(edgeOf({ method: "OPTIONS" })))?.status).toBe(204);
  const edge = edgeOf({ headers: { origin: "https://app.example" } });
  expect(await browserGuard(checks)(edge)).toBeUndefined();
  expect(edge.cors).toEqual({ "access-control-allow-origin": "https://app.example" });
});
