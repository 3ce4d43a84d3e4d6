/**
 * Our HTTP/1.1 GET against real servers on loopback: a raw TCP server for
 * what no store does on purpose (closing a kept connection, cutting an
 * answer short, never answering), Bun.serve with TLS for certificates.
 */
import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import type { Socket, TCPSocketListener } from "bun";
import { http1Fetch } from "../../../../src/storage/requests/http1/exchange.ts";
import { storedBytes } from "../../../../src/storage/requests/stored-bytes.ts";
import { tempDir } from "../../../helpers/files.ts";
import { selfSignedCert } from "../../../helpers/tls.ts";

interface Conn {
  requests: string[];
  socket: Socket<Conn>;
  /** What a write could not take yet, sent as the socket drains. */
  unsent: Buffer[];
}

/** Writes all of `text`, the rest as the socket drains (a socket's write takes only what fits). */
function writeAll(socket: Socket<Conn>, text: string): void {
  socket.data.unsent.push(Buffer.from(text, "latin1"));
  flush(socket);
}

function flush(socket: Socket<Conn>): void {
  const unsent = socket.data.unsent;
  while (unsent.length > 0) {
    const next = unsent[0]!;
    const n = socket.write(next);
    if (n < next.length) {
      unsent[0] = next.subarray(Math.max(n, 0));
      return;
    }
    unsent.shift();
  }
}

/** A raw server: `answer` gets each request's head and the socket, and writes what it likes. */
function rawServer(answer: (head: string, socket: Socket<Conn>, conn: Conn) => void): {
  url: string;
  connections: Conn[];
  stop(): void;
} {
  const connections: Conn[] = [];
  const server: TCPSocketListener<Conn> = Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        socket.data = { requests: [], socket, unsent: [] };
        connections.push(socket.data);
      },
      drain: flush,
      data(socket, bytes) {
        const head = Buffer.from(bytes).toString("latin1");
        socket.data.requests.push(head);
        answer(head, socket, socket.data);
      },
    },
  });
  stopping.push(() => server.stop(true));
  return { url: `http://127.0.0.1:${server.port}`, connections, stop: () => server.stop(true) };
}

const stopping: (() => void)[] = [];
afterEach(() => {
  for (const stop of stopping.splice(0)) stop();
});

const ok = (body: string) => `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nETag: "e"\r\n\r\n${body}`;

test("a GET goes as given (Host from the URL, the headers unchanged) and its connection carries the next one", async () => {
  const server = rawServer((_head, socket) => socket.write(ok("hello")));
  for (const path of ["/bucket/a%20b?versionId=1", "/bucket/c"]) {
    const r = await http1Fetch({
      method: "GET",
      url: new URL(`${server.url}${path}`),
      headers: [
        ["Range", "bytes=0-4"],
        ["x-amz-content-sha256", "UNSIGNED"],
      ],
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("etag")).toBe('"e"');
    expect(await r.text()).toBe("hello");
  }
  expect(server.connections).toHaveLength(1);
  const [first, second] = server.connections[0]!.requests;
  expect(first).toBe(
    `GET /bucket/a%20b?versionId=1 HTTP/1.1\r\nhost: ${new URL(server.url).host}\r\nRange: bytes=0-4\r\nx-amz-content-sha256: UNSIGNED\r\n\r\n`,
  );
  expect(second).toStartWith("GET /bucket/c HTTP/1.1\r\n");
});

test("a kept connection the server closed meanwhile: the GET goes again on a new one; one that fails midway is not sent again", async () => {
  // Answers a connection's first request; its second finds the connection closing, unanswered (a store's idle
  // timeout firing as the request arrives).
  const closing = rawServer((_head, socket, conn) => {
    if (conn.requests.length === 1) socket.write(ok("one"));
    else socket.end();
  });
  const url = new URL(`${closing.url}/k`);
  expect(await (await http1Fetch({ method: "GET", url, headers: [] })).text()).toBe("one");
  expect(await (await http1Fetch({ method: "GET", url, headers: [] })).text()).toBe("one");
  expect(closing.connections.map((c) => c.requests.length)).toEqual([2, 1]);

  // The second answer is cut short after its head: an error, sent once.
  let answered = 0;
  const cutting = rawServer((_head, socket) => {
    if (answered++ === 0) socket.write(ok("whole"));
    else {
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart");
      setTimeout(() => socket.end(), 20);
    }
  });
  const cut = new URL(`${cutting.url}/k`);
  expect(await (await http1Fetch({ method: "GET", url: cut, headers: [] })).text()).toBe("whole");
  const r = await http1Fetch({ method: "GET", url: cut, headers: [] });
  await expect(r.text()).rejects.toMatchObject({ code: "ECONNRESET" });
  expect(answered).toBe(2);
});

test("an abort before the head rejects with the signal's reason; after it, the body errors with it; the connection is not kept", async () => {
  const silent = rawServer(() => {});
  const before = new AbortController();
  const pending = http1Fetch({ method: "GET", url: new URL(`${silent.url}/k`), headers: [], signal: before.signal });
  setTimeout(() => before.abort(new Error("enough")), 50);
  await expect(pending).rejects.toThrow("enough");

  // A TLS handshake the server never answers: the abort ends the wait for the connection too.
  const opening = new AbortController();
  const handshake = http1Fetch({
    method: "GET",
    url: new URL(`${silent.url.replace("http:", "https:")}/k`),
    headers: [],
    signal: opening.signal,
  });
  setTimeout(() => opening.abort(new Error("no handshake")), 50);
  await expect(handshake).rejects.toThrow("no handshake");

  const endless = rawServer((_head, socket) => socket.write("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nabc"));
  const during = new AbortController();
  const r = await http1Fetch({ method: "GET", url: new URL(`${endless.url}/k`), headers: [], signal: during.signal });
  const reader = r.body!.getReader();
  expect((await reader.read()).value).toHaveLength(3);
  during.abort(new Error("stop now"));
  await expect(reader.read()).rejects.toThrow("stop now");
  await http1Fetch({ method: "GET", url: new URL(`${endless.url}/k`), headers: [] }).then((a) => a.body?.cancel());
  expect(endless.connections).toHaveLength(2);
});

test("a reader that falls behind pauses the connection: the server cannot push the whole body", async () => {
  const size = 256 * 1024 * 1024;
  let written = 0;
  const chunk = Buffer.alloc(1024 * 1024, 7);
  const server = rawServer((_head, socket) => {
    socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`);
    const push = () => {
      while (written < size) {
        const n = socket.write(chunk);
        written += Math.max(n, 0);
        if (n < chunk.length) return setTimeout(push, 5);
      }
    };
    push();
  });
  const r = await http1Fetch({ method: "GET", url: new URL(`${server.url}/k`), headers: [] });
  const reader = r.body!.getReader();
  await reader.read();
  await Bun.sleep(500);
  // The body's buffer (1 MiB) and the kernel's socket buffers, not the 256 MiB.
  expect(written).toBeLessThan(48 * 1024 * 1024);
  await reader.cancel();
});

test("a connection paused for a reader behind is resumed when its answer ends: the next request on it is answered", async () => {
  // As long as the body's buffer: its last bytes fill it, and the socket is paused as the answer ends.
  const body = Buffer.alloc(1024 * 1024, 1).toString("latin1");
  const server = rawServer((_head, socket) => writeAll(socket, ok(body)));
  const url = new URL(`${server.url}/k`);
  // Read only once the whole answer has arrived: the socket was paused with the body's last bytes queued.
  const first = await http1Fetch({ method: "GET", url, headers: [] });
  await Bun.sleep(200);
  expect((await first.text()).length).toBe(body.length);
  const second = await Promise.race([
    http1Fetch({ method: "GET", url, headers: [] }).then((r) => r.text()),
    Bun.sleep(2000).then(() => "no answer"),
  ]);
  expect(second.length).toBe(body.length);
  expect(server.connections).toHaveLength(1);
});

test("network failures reject with their code: refused, and an answer that is not HTTP", async () => {
  const free = rawServer(() => {});
  const port = new URL(free.url).port;
  free.stop();
  await expect(
    http1Fetch({ method: "GET", url: new URL(`http://127.0.0.1:${port}/k`), headers: [] }),
  ).rejects.toMatchObject({
    code: "ECONNREFUSED",
  });
  const garbage = rawServer((_head, socket) => socket.write("SSH-2.0-OpenSSH\r\n\r\n"));
  await expect(http1Fetch({ method: "GET", url: new URL(`${garbage.url}/k`), headers: [] })).rejects.toMatchObject({
    code: "EPROTO",
  });
});

test("TLS is verified as fetch verifies it: a self-signed certificate is refused, a name it does not carry too, and NODE_EXTRA_CA_CERTS is trusted", async () => {
  const dir = tempDir("http1-tls");
  const { key, cert } = selfSignedCert(dir);
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { key: Bun.file(key), cert: Bun.file(cert) },
    fetch: () => new Response("secret"),
  });
  stopping.push(() => server.stop(true));
  const get = (host: string) =>
    http1Fetch({ method: "GET", url: new URL(`https://${host}:${server.port}/k`), headers: [] });
  await expect(get("localhost")).rejects.toMatchObject({ code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
  // Trusted only from the start of a process, as for fetch.
  const script = join(dir, "get.ts");
  await Bun.write(
    script,
    `import { http1Fetch } from ${JSON.stringify(join(import.meta.dir, "../../../../src/storage/requests/http1/exchange.ts"))};
for (const host of ["localhost", "127.0.0.1"]) {
  const said = await http1Fetch({ method: "GET", url: new URL("https://" + host + ":${server.port}/k"), headers: [] })
    .then((r) => r.text(), (e) => e.code);
  console.log(host, said);
}`,
  );
  // Spawned, not run synchronously: the server answers from this process.
  const run = Bun.spawn(["bun", script], {
    env: { ...process.env, NODE_EXTRA_CA_CERTS: cert },
    stdout: "pipe",
  });
  expect(await new Response(run.stdout).text()).toBe("localhost secret\n127.0.0.1 ERR_TLS_CERT_ALTNAME_INVALID\n");
});

test("storedBytes sends a GET of a large range on its own connections; a small GET, anything else and any request under a proxy setting with fetch", async () => {
  const server = rawServer((_head, socket) => socket.write(ok("hello")));
  const own = (head: string) => !/user-agent/i.test(head);
  const range = (value: string) => ({ headers: { range: value } });
  await (await storedBytes(`${server.url}/a`, range("bytes=0-2097151"))).text();
  await (await storedBytes(new Request(`${server.url}/b`, range("bytes=2097152-")))).text();
  await (await storedBytes(`${server.url}/c`, range("bytes=0-2097150"))).text();
  await (await storedBytes(`${server.url}/d`)).text();
  await (await storedBytes(`${server.url}/e`, { method: "HEAD", ...range("bytes=0-") })).text();
  await (await storedBytes(`${server.url}/f`, { method: "PUT", body: "x" })).text();
  const saved = process.env.HTTP_PROXY;
  process.env.HTTP_PROXY = "http://127.0.0.1:9";
  try {
    process.env.NO_PROXY = "127.0.0.1";
    await (await storedBytes(`${server.url}/g`, range("bytes=0-"))).text();
  } finally {
    if (saved === undefined) delete process.env.HTTP_PROXY;
    else process.env.HTTP_PROXY = saved;
    delete process.env.NO_PROXY;
  }
  const requests = server.connections.flatMap((c) => c.requests);
  expect(requests.map((r) => [r.split(" ").slice(0, 2).join(" "), own(r)])).toEqual([
    ["GET /a", true],
    ["GET /b", true],
    ["GET /c", false],
    ["GET /d", false],
    ["HEAD /e", false],
    ["PUT /f", false],
    ["GET /g", false],
  ]);
});
