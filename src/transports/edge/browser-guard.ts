/**
 * A request from a browser: a Host or Origin not allowed is refused (DNS
 * rebinding, http-browser-checks.ts), a preflight is answered, and a
 * configured origin gets its CORS headers on whatever answer follows.
 */
import type { BrowserChecks } from "../http-browser-checks.ts";
import { rpcError } from "../http-replies.ts";
import type { Guard } from "./guard.ts";

export function browserGuard(browser: BrowserChecks): Guard {
  return (edge) => {
    const origin = edge.req.headers.get("origin");
    const forbidden = browser.refusal(edge.req);
    if (forbidden) return rpcError(403, -32000, forbidden);
    if (edge.req.method === "OPTIONS") return browser.preflight(origin);
    edge.cors = browser.cors(origin);
    return undefined;
  };
}
