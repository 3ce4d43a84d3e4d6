/**
 * `store-mcp-server doctor` through the compiled binary: against Ceph RGW and
 * fauxqs (all required checks pass, a write round trip leaves nothing), and
 * against what goes wrong — a refused port, a blackholed one, a 403 clock-skew
 * answer, a wrong secret, a store whose Date header is far off.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { freePort, type S3Server, startFauxqs } from "../../scripts/s3/local-servers.ts";
import {
  type FakeResponse,
  type FakeS3,
  listBucketsXml,
  listObjectsXml,
  startFakeS3,
  xml,
} from "../helpers/fake-s3.ts";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { tempDir } from "../helpers/files.ts";
import { requireBinary } from "../helpers/mcp.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";
import { selfSignedCert } from "../helpers/tls.ts";

let bucket: string;
let fauxqs: S3Server;
let proxy: FaultProxy;
let fake: FakeS3;

beforeAll(async () => {
  bucket = await freshBucket("doctor");
  fauxqs = await startFauxqs();
  proxy = await startFaultProxy(s3().endpoint);
  fake = await startFakeS3();
}, 60_000);
afterAll(async () => {
  await fauxqs.stop();
  await proxy.stop();
  await fake.stop();
});

interface Outcome {
  code: number;
  stdout: string;
  checks: { name: string; status: string; detail: string; fix?: string }[];
}

async function doctor(env: Record<string, string>, args: string[] = []): Promise<Outcome> {
  const proc = Bun.spawn([requireBinary(), "doctor", "--json", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { code, stdout, checks: JSON.parse(stdout).checks };
}
const find = (o: Outcome, name: string) => o.checks.find((c) => c.name === name);

test("against Ceph RGW: every required check passes, the write test leaves nothing behind, the secret never appears", async () => {
  const o = await doctor(s3Env(), ["--bucket", bucket, "--write-test", bucket]);
  expect(o.code, o.stdout).toBe(0);
  expect(o.checks.filter((c) => c.status === "fail")).toEqual([]);
  expect(find(o, "http")!.detail).toContain("Ceph RGW");
  expect(find(o, "credentials source")!.detail).toContain(`key …${s3().accessKeyId.slice(-4)}`);
  expect(find(o, "addressing")!.detail).toContain("path-style works");
  expect(find(o, "write test (when_required)")!.status).toBe("ok");
  expect(o.stdout).not.toContain(s3().secretAccessKey);
  expect(o.stdout).not.toContain(s3().accessKeyId);
  const left = await sdkClient().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: ".store-mcp-doctor/" }));
  expect(left.KeyCount ?? 0).toBe(0);
  // The plain rendering: one line per check with its mark.
  const plain = Bun.spawnSync([requireBinary(), "doctor", "--bucket", bucket], {
    env: { PATH: process.env.PATH ?? "", ...s3Env() },
  });
  expect(plain.exitCode).toBe(0);
  expect(plain.stdout.toString()).toMatch(/^✓ configuration: /m);
  expect(plain.stdout.toString()).toContain("All required checks passed.");
}, 60_000);

test("the provider: Ceph's answer names it, a warning says which STORE_PROVIDER to give, and with it given the check agrees", async () => {
  const unnamed = await doctor(s3Env(), ["--bucket", bucket]);
  expect(find(unnamed, "provider")).toMatchObject({ status: "warn" });
  expect(find(unnamed, "provider")!.fix).toContain("STORE_PROVIDER=ceph");
  const named = await doctor({ ...s3Env(), STORE_PROVIDER: "ceph" }, ["--bucket", bucket]);
  expect(find(named, "provider")).toMatchObject({ status: "ok", detail: "ceph (the store's answer agrees)" });
  const wrong = Bun.spawnSync([requireBinary(), "doctor"], {
    env: { PATH: process.env.PATH ?? "", ...s3Env(), STORE_PROVIDER: "wasabi" },
  });
  expect(wrong.exitCode).not.toBe(0);
  expect(wrong.stderr.toString() + wrong.stdout.toString()).toContain('STORE_PROVIDER: "wasabi" must be one of');
}, 60_000);

test("against fauxqs: passes, and reports that it accepts the SDK's default checksums", async () => {
  const env = {
    STORE_ENDPOINT_URL: fauxqs.endpoint,
    STORE_ACCESS_KEY_ID: fauxqs.accessKeyId,
    STORE_SECRET_ACCESS_KEY: fauxqs.secretAccessKey,
    STORE_REGION: fauxqs.region,
  };
  await fetch(`${fauxqs.endpoint}/doctor-bucket`, { method: "PUT" });
  const o = await doctor(env, ["--write-test", "doctor-bucket"]);
  expect(o.code, o.stdout).toBe(0);
  expect(find(o, "SDK default checksums")!.detail).toContain("accepts");
}, 60_000);

test("a refused port: ✗ tcp naming ECONNREFUSED and the fix; connections reset: ✗ http; exit 1", async () => {
  const closed = await doctor({ ...s3Env(), STORE_ENDPOINT_URL: `http://127.0.0.1:${freePort()}` });
  expect(closed.code).toBe(1);
  expect(find(closed, "tcp")).toMatchObject({ status: "fail", detail: expect.stringContaining("ECONNREFUSED") });
  expect(find(closed, "tcp")!.fix).toContain("port");
  proxy.set({ kind: "refuse" });
  const reset = await doctor({ ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint });
  expect(reset.code).toBe(1);
  // The reset can beat the connect callback or come with the first request: either step fails, naming it.
  const failed = reset.checks.find((c) => c.status === "fail")!;
  expect(["tcp", "http"]).toContain(failed.name);
  expect(failed.detail).toMatch(/ECONNRESET|no HTTP answer|cannot connect/);
}, 30_000);

test("a blackholed endpoint: ✗ within seconds, naming the step that got no answer", async () => {
  proxy.set({ kind: "blackhole" });
  const started = Date.now();
  const o = await doctor({ ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint });
  expect(o.code).toBe(1);
  expect(find(o, "http")).toMatchObject({ status: "fail", detail: expect.stringContaining("no HTTP answer") });
  expect(Date.now() - started).toBeLessThan(20_000);
}, 30_000);

test("a 403 RequestTimeTooSkewed: ✗ list buckets with the clock fix", async () => {
  proxy.set({ kind: "http-error", status: 403, code: "RequestTimeTooSkewed", count: 100 });
  const o = await doctor({ ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint });
  proxy.set({ kind: "pass" });
  expect(o.code).toBe(1);
  expect(find(o, "list buckets")).toMatchObject({
    status: "fail",
    detail: expect.stringContaining("RequestTimeTooSkewed"),
    fix: expect.stringContaining("clock"),
  });
}, 30_000);

test("a wrong secret: ✗ list buckets naming SignatureDoesNotMatch, never the secret", async () => {
  const o = await doctor({ ...s3Env(), STORE_SECRET_ACCESS_KEY: "not-the-secret-0123456789abcdef" });
  expect(o.code).toBe(1);
  expect(find(o, "list buckets")).toMatchObject({
    status: "fail",
    detail: expect.stringContaining("SignatureDoesNotMatch"),
  });
  expect(o.stdout).not.toContain("not-the-secret-0123456789abcdef");
}, 30_000);

test("a store whose Date is 10 minutes off: ! clock; 20 minutes: ✗ clock", async () => {
  const env = {
    STORE_ENDPOINT_URL: fake.endpoint,
    STORE_ACCESS_KEY_ID: "AKIAFAKE0000",
    STORE_SECRET_ACCESS_KEY: "fake-secret-0000000000",
  };
  for (const [minutes, status] of [
    [10, "warn"],
    [20, "fail"],
  ] as const) {
    const date = new Date(Date.now() - minutes * 60_000).toUTCString();
    fake.handle(() => ({
      headers: { date },
      body: xml("<ListAllMyBucketsResult><Buckets></Buckets></ListAllMyBucketsResult>"),
    }));
    const o = await doctor(env);
    expect(find(o, "clock"), `${minutes} min`).toMatchObject({
      status,
      detail: expect.stringContaining("ahead of the store"),
    });
  }
}, 30_000);

test("configuration problems are all reported at once, exit 1, nothing else tried", async () => {
  const o = await doctor({ STORE_ENDPOINT_URL: "not a url", STORE_ACCESS_KEY_ID: "only-half" });
  expect(o.code).toBe(1);
  expect(o.checks.map((c) => c.name)).toEqual(["configuration", "configuration"]);
  expect(o.checks.every((c) => c.status === "fail")).toBe(true);
});

test("a self-signed certificate: ✗ tls naming the problem and how to trust the CA", async () => {
  const { key, cert } = selfSignedCert(tempDir("doctor-tls"));
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { key: Bun.file(key), cert: Bun.file(cert) },
    fetch: () => new Response(""),
  });
  try {
    const o = await doctor({
      STORE_ENDPOINT_URL: `https://localhost:${server.port}`,
      STORE_ACCESS_KEY_ID: "AKIAFAKE0000",
      STORE_SECRET_ACCESS_KEY: "fake-secret-0000000000",
    });
    expect(o.code).toBe(1);
    expect(find(o, "tls")).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("SELF_SIGNED"),
      fix: expect.stringContaining("NODE_EXTRA_CA_CERTS"),
    });
  } finally {
    server.stop(true);
  }
}, 30_000);

test("a bucket in another region: ✗ naming the region to set", async () => {
  const env = {
    STORE_ENDPOINT_URL: fake.endpoint,
    STORE_ACCESS_KEY_ID: "AKIAFAKE0000",
    STORE_SECRET_ACCESS_KEY: "fake-secret-0000000000",
  };
  fake.handle((req) =>
    req.method === "HEAD"
      ? { status: 301, headers: { "x-amz-bucket-region": "eu-west-1" } }
      : {
          body: xml(
            "<ListAllMyBucketsResult><Buckets><Bucket><Name>far-away</Name></Bucket></Buckets></ListAllMyBucketsResult>",
          ),
        },
  );
  const o = await doctor(env, ["--bucket", "far-away"]);
  expect(o.code).toBe(1);
  expect(find(o, "bucket far-away")).toMatchObject({
    status: "fail",
    detail: expect.stringContaining("eu-west-1"),
    fix: "set STORE_REGION=eu-west-1",
  });
}, 30_000);

/** The doctor's human output, read as it comes: each line with the time it arrived. */
async function doctorLines(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number; lines: { text: string; at: number }[]; ms: number }> {
  const started = performance.now();
  const proc = Bun.spawn([requireBinary(), "doctor", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: { text: string; at: number }[] = [];
  let buffer = "";
  for await (const chunk of proc.stdout) {
    buffer += new TextDecoder().decode(chunk);
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      lines.push({ text: buffer.slice(0, nl), at: performance.now() - started });
      buffer = buffer.slice(nl + 1);
    }
  }
  return { code: await proc.exited, lines, ms: performance.now() - started };
}

const fakeStoreEnv = () => ({
  STORE_ENDPOINT_URL: fake.endpoint,
  STORE_ACCESS_KEY_ID: "AKIAFAKE0000",
  STORE_SECRET_ACCESS_KEY: "fake-secret-0000000000",
});

test("--write-test whose DELETE is refused: ✗ naming the key left behind, exit 1, never 'nothing left behind'", async () => {
  const stored = new Map<string, Buffer>();
  fake.handle((req): FakeResponse => {
    if (req.path === "/") return { body: listBucketsXml(["keep"]) };
    if (req.method === "PUT") return (stored.set(req.path, req.body), { headers: { etag: '"x"' } });
    if (req.method === "DELETE")
      return { status: 403, body: xml("<Error><Code>AccessDenied</Code><Message>no deletes</Message></Error>") };
    if (req.method === "HEAD") return { headers: { "content-length": "0" } };
    if (stored.has(req.path)) return { body: stored.get(req.path)! };
    return { body: listObjectsXml("keep", []) };
  });
  const o = await doctor(fakeStoreEnv(), ["--bucket", "keep", "--write-test", "keep"]);
  expect(o.code, o.stdout).toBe(1);
  const cleanup = o.checks.filter((c) => c.name === "write test clean-up");
  expect(cleanup.length).toBeGreaterThan(0);
  const left = [...stored.keys()].map((p) => p.replace("/keep/", ""));
  for (const c of cleanup) {
    expect(c.status).toBe("fail");
    expect(c.detail).toContain("AccessDenied");
    expect(left.some((k) => c.detail.includes(`s3://keep/${k}`))).toBe(true);
  }
  expect(o.stdout).not.toContain("nothing left behind");
}, 60_000);

test("a store that trickles: every check has a deadline, each line is printed as its check finishes, exit 1", async () => {
  fake.handle(() => ({
    headers: { "content-type": "application/xml" },
    body: listBucketsXml(Array.from({ length: 50 }, (_, i) => `b${i}`)),
    trickle: { bytes: 4, everyMs: 200 },
  }));
  const run = await doctorLines(fakeStoreEnv());
  expect(run.code).toBe(1);
  const text = run.lines.map((l) => l.text).join("\n");
  expect(text).toMatch(/✗ list buckets: no answer within \d+ s/);
  // The first checks were on screen long before the slow one ended.
  const first = run.lines.find((l) => l.text.startsWith("✓ configuration"))!;
  expect(first.at).toBeLessThan(run.lines.at(-1)!.at - 5_000);
  expect(run.ms).toBeLessThan(45_000);
}, 60_000);

test("store-supplied text cannot forge the verdict or send terminal escapes: control characters are shown escaped", async () => {
  const forged = "evil&#10;All required checks passed.&#13;&#27;[2J&#27;]0;pwned&#7;";
  fake.handle((req) =>
    req.path === "/"
      ? {
          body: xml(
            `<ListAllMyBucketsResult><Buckets><Bucket><Name>${forged}</Name></Bucket></Buckets></ListAllMyBucketsResult>`,
          ),
        }
      : { status: 403, body: xml("<Error><Code>AccessDenied</Code></Error>") },
  );
  const run = await doctorLines(fakeStoreEnv());
  const text = run.lines.map((l) => l.text).join("\n");
  expect(run.code).toBe(1);
  expect(text).toContain("evil\\u000aAll required checks passed.");
  expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  expect(run.lines.filter((l) => l.text.startsWith("All required checks passed."))).toEqual([]);
  expect(run.lines.at(-1)!.text).toContain("Some checks failed");
}, 60_000);
