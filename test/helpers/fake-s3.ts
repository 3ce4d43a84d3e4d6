/**
 * A small hostile S3 store on loopback, for what no real store will do:
 * huge or endless listings, corrupted or short bodies, lying ETags, answers
 * that trickle. Raw TCP, so a test controls every byte (a close-delimited
 * body, a connection cut after N bytes). Any credentials are accepted.
 */
import { createServer, type Socket } from "node:net";

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: Buffer;
}

export interface FakeResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** "length" (default): Content-Length set; "close": no length, the body ends when the connection closes. */
  framing?: "length" | "close";
  /** Send only this many body bytes, then close the connection (after a Content-Length that promises more). */
  cutAfter?: number;
  /** Send the body this many bytes at a time, `everyMs` apart. */
  trickle?: { bytes: number; everyMs: number };
  /** Accept and never answer. */
  silent?: boolean;
}

export type FakeHandler = (req: FakeRequest) => FakeResponse | Promise<FakeResponse>;

export interface FakeS3 {
  endpoint: string;
  requests: FakeRequest[];
  handle(handler: FakeHandler): void;
  stop(): Promise<void>;
}

export const xml = (inner: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${inner}`;

export function listBucketsXml(names: string[]): string {
  const buckets = names
    .map((n) => `<Bucket><Name>${n}</Name><CreationDate>2024-01-01T00:00:00.000Z</CreationDate></Bucket>`)
    .join("");
  return xml(`<ListAllMyBucketsResult><Owner><ID>x</ID></Owner><Buckets>${buckets}</Buckets></ListAllMyBucketsResult>`);
}

export function listObjectsXml(bucket: string, keys: string[], truncated = false): string {
  const contents = keys
    .map(
      (k) =>
        `<Contents><Key>${k}</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified><ETag>"d41d8cd98f00b204e9800998ecf8427e"</ETag><Size>1</Size><StorageClass>STANDARD</StorageClass></Contents>`,
    )
    .join("");
  return xml(
    `<ListBucketResult><Name>${bucket}</Name><Prefix></Prefix><KeyCount>${keys.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>${truncated}</IsTruncated>${truncated ? "<NextContinuationToken>next</NextContinuationToken>" : ""}${contents}</ListBucketResult>`,
  );
}

function parseHead(head: string): Omit<FakeRequest, "body"> {
  const [requestLine, ...lines] = head.split("\r\n");
  const [method, target] = requestLine!.split(" ") as [string, string];
  const url = new URL(target, "http://fake");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { method, path: decodeURIComponent(url.pathname), query: url.searchParams, headers };
}

async function answer(socket: Socket, res: FakeResponse): Promise<void> {
  if (res.silent) return;
  const body = typeof res.body === "string" ? Buffer.from(res.body) : Buffer.from(res.body ?? new Uint8Array(0));
  const status = res.status ?? 200;
  const headers: Record<string, string> = { "content-type": "application/xml", ...res.headers };
  // A HEAD answer may give the length of the body it does not send.
  if ((res.framing ?? "length") === "length" && !(res.headers?.["content-length"] !== undefined && body.length === 0))
    headers["content-length"] = String(body.length);
  if (res.framing === "close") headers.connection = "close";
  const head = `HTTP/1.1 ${status} X\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\r\n")}\r\n\r\n`;
  socket.write(head);
  const payload = res.cutAfter !== undefined ? body.subarray(0, res.cutAfter) : body;
  if (res.trickle) {
    for (let i = 0; i < payload.length && !socket.destroyed; i += res.trickle.bytes) {
      socket.write(payload.subarray(i, i + res.trickle.bytes));
      await Bun.sleep(res.trickle.everyMs);
    }
  } else {
    await new Promise<void>((resolve) => socket.write(payload, () => resolve()));
  }
  if (res.cutAfter !== undefined || res.framing === "close") socket.end();
}

export async function startFakeS3(): Promise<FakeS3> {
  let handler: FakeHandler = () => ({ status: 500, body: xml("<Error><Code>InternalError</Code></Error>") });
  const requests: FakeRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let buffer = Buffer.alloc(0);
    let busy = false;
    const pump = async () => {
      if (busy) return;
      busy = true;
      try {
        for (;;) {
          const end = buffer.indexOf("\r\n\r\n");
          if (end < 0) return;
          const head = parseHead(buffer.subarray(0, end).toString("latin1"));
          const length = Number(head.headers["content-length"] ?? 0);
          if (buffer.length < end + 4 + length) return;
          const req = { ...head, body: buffer.subarray(end + 4, end + 4 + length) };
          buffer = buffer.subarray(end + 4 + length);
          requests.push(req);
          await answer(socket, await handler(req));
          if (socket.destroyed) return;
        }
      } finally {
        busy = false;
      }
    };
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      void pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    handle(h) {
      handler = h;
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The environment for the binary to talk to the fake store. */
export function fakeEnv(fake: FakeS3, extra: Record<string, string> = {}): Record<string, string> {
  return {
    STORE_ENDPOINT_URL: fake.endpoint,
    STORE_ACCESS_KEY_ID: "FAKEACCESSKEY0000001",
    STORE_SECRET_ACCESS_KEY: "fake-secret-key-000000000000000000000001",
    STORE_REGION: "us-east-1",
    STORE_MAX_ATTEMPTS: "1",
    ...extra,
  };
}

/** The binary's peak resident memory (VmHWM), in bytes. */
export function peakRss(pid: number): number {
  const status = require("node:fs").readFileSync(`/proc/${pid}/status`, "utf8") as string;
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}
