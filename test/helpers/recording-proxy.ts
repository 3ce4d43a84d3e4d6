/** An HTTP proxy in front of the test S3 server that records each request's method, path, query and some headers. */
export interface Recorded {
  method: string;
  path: string;
  range: string | null;
  ifMatch: string | null;
  /** The query string, as sent ("" or "?…"). */
  search: string;
  /** x-amz-content-sha256: the body's SHA-256 as signed, or UNSIGNED-PAYLOAD. */
  payloadHash: string | null;
  contentMd5: string | null;
  /** x-amz-server-side-encryption and its KMS key id, as sent. */
  sse: string | null;
  sseKey: string | null;
  /** The SSE-C key's MD5 sent for the object, and for a copy's source. */
  customerKeyMd5: string | null;
  copySourceKeyMd5: string | null;
  /** Whether the SDK sent it (its x-amz-user-agent), not one of our own quick requests. */
  fromSdk: boolean;
}

/**
 * `hold` may keep a request from the store until the promise it returns
 * settles; `answer` may answer a request itself (the store never sees it);
 * `alter` may change a request's body on its way (a proxy corrupting data).
 * A request `answer` answers has its body read first, unless `answerUnread`:
 * then the answer goes before (a store refusing a request as it arrives).
 */
export function startRecordingProxy(
  target: string,
  hold?: (request: Recorded) => Promise<void> | undefined,
  answer?: (request: Recorded) => Response | undefined,
  alter?: (request: Recorded, body: Uint8Array) => Uint8Array,
  answerUnread = false,
): { endpoint: string; requests: Recorded[]; stop(): void } {
  const requests: Recorded[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const recorded = {
        method: req.method,
        path: decodeURIComponent(url.pathname),
        range: req.headers.get("range"),
        ifMatch: req.headers.get("if-match"),
        search: url.search,
        payloadHash: req.headers.get("x-amz-content-sha256"),
        contentMd5: req.headers.get("content-md5"),
        sse: req.headers.get("x-amz-server-side-encryption"),
        sseKey: req.headers.get("x-amz-server-side-encryption-aws-kms-key-id"),
        customerKeyMd5: req.headers.get("x-amz-server-side-encryption-customer-key-md5"),
        copySourceKeyMd5: req.headers.get("x-amz-copy-source-server-side-encryption-customer-key-md5"),
        fromSdk: req.headers.has("x-amz-user-agent") || (req.headers.get("user-agent") ?? "").includes("aws-sdk"),
      };
      requests.push(recorded);
      await hold?.(recorded);
      const own = answer?.(recorded);
      if (own) {
        if (!answerUnread) await req.arrayBuffer();
        return own;
      }
      const upstream = new URL(url.pathname + url.search, target);
      const headers = new Headers(req.headers);
      // Keep the client's Host header: it is part of the SigV4 signature.
      return fetch(upstream, {
        method: req.method,
        headers,
        body:
          req.method === "GET" || req.method === "HEAD"
            ? undefined
            : alter
              ? alter(recorded, new Uint8Array(await req.arrayBuffer()))
              : await req.arrayBuffer(),
        redirect: "manual",
        decompress: false,
      } as RequestInit);
    },
  });
  return { endpoint: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
}
