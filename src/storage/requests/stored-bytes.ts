/**
 * How requests reach a store: a GET of a large range (a download's, a
 * copy's source) on a kept HTTP/1.1 connection of our own
 * (http1/exchange.ts: a third less CPU per byte received than Bun's fetch),
 * anything else with fetch. A small GET, or a window read whole into memory
 * (a search's 1 MiB windows), costs less with fetch, which does its socket
 * work on its own thread and reads a body into one buffer natively: a bulk
 * download of 2,000 small objects spent 20-30% more CPU on our connections.
 * fetch also keeps whatever it knows more of: a proxy from the environment
 * (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), NODE_TLS_REJECT_UNAUTHORIZED=0, a
 * body to send. Either way the body is as the server sent it: Bun's fetch
 * inflates a Content-Encoding: gzip answer by default (an option of fetch,
 * not of Request), and an object stored that way is its gzip bytes — its
 * Content-Length, its MD5 — not their inflation (a download of one failed as
 * IncompleteBody).
 */

import { type BareRequest, http1Fetch } from "./http1/exchange.ts";

export const storedBytes = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const bare = bareRequest(input, init);
  return bare ? http1Fetch(bare) : fetch(input, { ...init, decompress: false } as RequestInit);
};

/** A range at least this long goes on our own connections: a download's first range (2 MiB) and every later one. */
const LARGE_RANGE_BYTES = 2 * 1024 * 1024;

/** The request as http1Fetch takes it, or undefined when it is fetch's to send. */
function bareRequest(input: RequestInfo | URL, init: RequestInit | undefined): BareRequest | undefined {
  const request = input instanceof Request ? input : undefined;
  if ((init?.method ?? request?.method ?? "GET").toUpperCase() !== "GET") return undefined;
  if (init?.body != null || request?.body != null) return undefined;
  const given = init?.headers ?? request?.headers;
  if (!largeRange(rangeIn(given))) return undefined;
  const url = new URL(request ? request.url : input instanceof URL ? input.href : String(input));
  if (!ownConnectionsFor(url.protocol)) return undefined;
  return { method: "GET", url, headers: new Headers(given), signal: init?.signal ?? request?.signal ?? null };
}

/** The Range header among `headers`, read where they are (most requests have none: no Headers made to find out). */
function rangeIn(headers: HeadersInit | undefined): string | null {
  if (headers === undefined) return null;
  if (headers instanceof Headers) return headers.get("range");
  const entries = Array.isArray(headers) ? headers : Object.entries(headers);
  for (const [name, value] of entries) if (name.length === 5 && name.toLowerCase() === "range") return value ?? null;
  return null;
}

/** Whether a Range header asks for LARGE_RANGE_BYTES or more: bytes=a-b that long, or bytes=a- (the rest of an object). */
function largeRange(range: string | null): boolean {
  const bounds = range === null ? undefined : /^bytes=(\d+)-(\d*)$/.exec(range);
  if (!bounds) return false;
  return bounds[2] === "" || Number(bounds[2]) - Number(bounds[1]) + 1 >= LARGE_RANGE_BYTES;
}

/** Whether a request to a URL of `protocol` may go on our own connections: nothing in the environment asks fetch to route or trust differently. */
function ownConnectionsFor(protocol: string): boolean {
  const env = process.env;
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === "0") return false;
  if (protocol === "http:") return !(env.HTTP_PROXY || env.http_proxy || env.ALL_PROXY || env.all_proxy);
  if (protocol === "https:") return !(env.HTTPS_PROXY || env.https_proxy || env.ALL_PROXY || env.all_proxy);
  return false;
}
