/**
 * A store behind TLS: Debian's nginx terminating https with a self-signed
 * certificate in front of Ceph. A download's large ranges go on the server's
 * own connections (src/storage/requests/http1/), everything else through
 * Bun's fetch; both must trust what fetch trusts (NODE_EXTRA_CA_CERTS) and
 * nothing else.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { freePort } from "../../scripts/s3/local-servers.ts";
import { randomBytes, sha256, tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { NGINX } from "../helpers/nginx.ts";
import { tracked } from "../helpers/processes.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";
import { selfSignedCert } from "../helpers/tls.ts";

const MiB = 1024 * 1024;
const original = randomBytes(24 * MiB + 5, 37);
let bucket: string;
let dir: string;
let endpoint: string;
let accessLog: string;
let stopNginx: () => Promise<void>;

beforeAll(async () => {
  bucket = await freshBucket("tls");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: original }));
  dir = tempDir("tls-store");
  selfSignedCert(dir);
  const port = freePort();
  accessLog = join(dir, "access.log");
  mkdirSync(join(dir, "logs"), { recursive: true });
  // Each request logged with its range and its Accept header (Bun's fetch always sends one; ours never).
  writeFileSync(
    join(dir, "nginx.conf"),
    `worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 256; }
http {
  log_format ranges '$request_method $uri range=$http_range accept=$http_accept';
  access_log ${accessLog} ranges;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port} ssl;
    server_name localhost;
    ssl_certificate ${dir}/cert.pem;
    ssl_certificate_key ${dir}/key.pem;
    client_max_body_size 0;
    location / {
      proxy_pass ${s3().endpoint};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
`,
  );
  const proc = Bun.spawn([NGINX, "-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], {
    stdout: "ignore",
    stderr: "pipe",
  });
  tracked(proc);
  endpoint = `https://localhost:${port}`;
  const deadline = Date.now() + 10_000;
  while (
    !(await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
      (s) => (s.end(), true),
      () => false,
    ))
  ) {
    if (proc.exitCode !== null || Date.now() > deadline)
      throw new Error(`nginx did not start: ${await new Response(proc.stderr).text()}`);
    await Bun.sleep(50);
  }
  stopNginx = async () => {
    proc.kill("SIGQUIT");
    await proc.exited;
  };
}, 60_000);

afterAll(async () => {
  await stopNginx?.();
});

const env = (extra: Record<string, string>) => ({
  ...s3Env(),
  STORE_ENDPOINT_URL: endpoint,
  STORE_PROVIDER: "ceph",
  STORE_LOG_LEVEL: "error",
  ...extra,
});

/** The server with `extra` in its environment, asked to download big.bin to `name` in the test's folder. */
async function download(extra: Record<string, string>, name: string) {
  const session = await connectBinary({ env: env(extra), args: ["--allowed-dir", dir] });
  const result = await call(session.client, "get_object", {
    bucket_name: bucket,
    object_key: "big.bin",
    mode: "download",
    local_path: join(dir, name),
  });
  return { session, result };
}

test("with the CA trusted, a download through TLS is whole, its large ranges on the server's own connections", async () => {
  const { session, result: r } = await download({ NODE_EXTRA_CA_CERTS: join(dir, "cert.pem") }, "big.bin");
  try {
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ bytes: original.length, sha256: sha256(original) });
    expect(sha256(readFileSync(join(dir, "big.bin")))).toBe(sha256(original));
  } finally {
    await session.close();
  }
  const gets = readFileSync(accessLog, "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`GET /${bucket}/big.bin`));
  // The first range (2 MiB) and the rest: asked without the Accept header Bun's fetch always sends.
  expect(gets.length).toBeGreaterThan(0);
  expect(gets.filter((line) => line.endsWith("accept=-")).length).toBe(gets.length);
}, 60_000);

test("without it, the download is refused naming the certificate, nothing is written, and the server keeps serving", async () => {
  const { session, result: r } = await download({}, "refused.bin");
  try {
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/SELF_SIGNED|certificate/i);
    expect(() => readFileSync(join(dir, "refused.bin"))).toThrow();
    const again = await call(session.client, "list_buckets", {});
    expect(again.isError).toBe(true);
  } finally {
    await session.close();
  }
}, 60_000);
