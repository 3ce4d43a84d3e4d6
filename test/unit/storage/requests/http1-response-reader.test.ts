import { expect, test } from "bun:test";
import { type ResponseHead, ResponseReader } from "../../../../src/storage/requests/http1/response-reader.ts";

interface Read {
  heads: ResponseHead[];
  body: string;
  ended: number;
}

/** Feeds `wire` to a reader in pieces of `size` bytes (every split the framing may meet). */
function read(wire: string, size: number, bodyless = false): Read & { reader: ResponseReader } {
  const got: Read = { heads: [], body: "", ended: 0 };
  const reader = new ResponseReader(
    {
      head: (h) => got.heads.push(h),
      body: (b) => {
        got.body += Buffer.from(b).toString("latin1");
      },
      end: () => got.ended++,
    },
    bodyless,
  );
  const bytes = Buffer.from(wire, "latin1");
  for (let at = 0; at < bytes.length; at += size) reader.feed(new Uint8Array(bytes.subarray(at, at + size)));
  return Object.assign(got, { reader });
}

const SPLITS = [1, 2, 3, 7, 64, 100_000];

test("a Content-Length body, fed in any pieces: its head, its bytes, one end, the connection reusable", () => {
  const wire =
    "HTTP/1.1 206 Partial Content\r\nContent-Length: 11\r\nContent-Range: bytes 0-10/20\r\nx-amz-meta-a: 1\r\nX-Amz-Meta-A: 2\r\n\r\nhello world";
  for (const size of SPLITS) {
    const got = read(wire, size);
    expect(got.heads).toHaveLength(1);
    expect(got.heads[0]).toMatchObject({ status: 206, statusText: "Partial Content", reusable: true, bodyless: false });
    expect(got.heads[0]!.headers).toContainEqual(["content-range", "bytes 0-10/20"]);
    // A repeated name stays repeated, for Headers to join.
    expect(got.heads[0]!.headers.filter(([n]) => n === "x-amz-meta-a")).toEqual([
      ["x-amz-meta-a", "1"],
      ["x-amz-meta-a", "2"],
    ]);
    expect(got.body).toBe("hello world");
    expect(got.ended).toBe(1);
    expect(got.reader.done).toBe(true);
  }
});

test("a chunked body with extensions and trailers is unframed in any pieces", () => {
  const wire =
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n1\r\n \r\n0005\r\nworld\r\n0\r\nx-trailer: t\r\n\r\n";
  for (const size of SPLITS) {
    const got = read(wire, size);
    expect(got.body).toBe("hello world");
    expect(got.ended).toBe(1);
    expect(got.heads[0]!.reusable).toBe(true);
  }
});

test("1xx answers are skipped; a HEAD, 204 and 304 end at their head whatever their Content-Length", () => {
  const got = read("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 5);
  expect(got.heads.map((h) => h.status)).toEqual([200]);
  expect(got.body).toBe("ok");
  for (const [wire, bodyless] of [
    ["HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", true],
    ["HTTP/1.1 204 No Content\r\n\r\n", false],
    ["HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", false],
  ] as const) {
    const head = read(wire, 3, bodyless);
    expect(head.heads[0]!.bodyless).toBe(true);
    expect(head.ended).toBe(1);
    expect(head.body).toBe("");
  }
});

test("a body without a length runs to the close, and that connection is not kept; Connection: close and HTTP/1.0 are not kept", () => {
  const got = read("HTTP/1.1 200 OK\r\n\r\nsome bytes", 4);
  expect(got.heads[0]!.reusable).toBe(false);
  expect(got.ended).toBe(0);
  expect(got.reader.midway).toBe(false);
  got.reader.closed();
  expect(got.ended).toBe(1);
  expect(got.body).toBe("some bytes");
  expect(
    read("HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n", 9).heads[0]!.reusable,
  ).toBe(false);
  expect(read("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 9).heads[0]!.reusable).toBe(false);
});

test("a close before the answer's end leaves it midway: the exchange reports it as cut short", () => {
  const got = read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 100);
  expect(got.reader.midway).toBe(true);
  got.reader.closed();
  expect(got.ended).toBe(0);
});

test("malformed answers throw: a bad status line, a header without a colon, a bad size, bytes past the end, an endless head", () => {
  const bad = [
    "HTTP/2 200 OK\r\n\r\n",
    "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",
    `HTTP/1.1 200 OK\r\nx-long: ${"a".repeat(70_000)}\r\n\r\n`,
  ];
  for (const wire of bad) expect(() => read(wire, 1000)).toThrow(/the store/);
});
