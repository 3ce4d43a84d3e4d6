/**
 * The container image, run exactly as an MCP client's config runs it:
 * `podman run -i --rm -e STORE_… IMAGE` (host network, to reach the local
 * Ceph RGW). Fails, never skips, when the image cannot be built.
 */

import { beforeAll, expect, test } from "bun:test";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { freePort } from "../../scripts/s3/local-servers.ts";
import { buildImage, IMAGE, podmanEnv } from "../helpers/container.ts";
import { connectHttp } from "../helpers/http.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

let env: Record<string, string>;
let bucket: string;
const STORE_VARS = ["STORE_ACCESS_KEY_ID", "STORE_SECRET_ACCESS_KEY", "STORE_REGION", "STORE_ENDPOINT_URL"];

beforeAll(async () => {
  env = podmanEnv();
  buildImage(env);
  bucket = await freshBucket("container");
  await sdkClient().send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: "inside.txt",
      Body: "read from inside a container\n",
      ContentType: "text/plain",
    }),
  );
}, 120_000);

function runArgs(name: string): string[] {
  return [
    "run",
    "-i",
    "--rm",
    "--pull=never",
    "--network",
    "host",
    "--name",
    name,
    ...STORE_VARS.flatMap((v) => ["-e", v]),
    IMAGE,
  ];
}

test("the image runs as a non-root user with the binary as its entrypoint", () => {
  const out = Bun.spawnSync(
    ["podman", "image", "inspect", "--format", "{{.Config.User}} {{json .Config.Entrypoint}}", IMAGE],
    { env: { ...process.env, ...env } },
  );
  expect(out.stdout.toString().trim()).toBe('65532:65532 ["/usr/local/bin/store-mcp-server"]');
});

test("a client config's `podman run -i --rm -e …`: tools/list, list_buckets and get_object over stdio", async () => {
  const transport = new StdioClientTransport({
    command: "podman",
    args: runArgs(`store-mcp-it-${process.pid}`),
    env: { PATH: process.env.PATH ?? "", ...env, ...s3Env() },
    stderr: "pipe",
  });
  const client = new Client({ name: "container-test", version: "1" });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "cancel_job",
      "copy_object",
      "copy_prefix",
      "create_bucket",
      "delete_bucket",
      "download_prefix",
      "find_objects",
      "get_bucket_settings",
      "get_object",
      "get_object_tags",
      "head_object",
      "inspect_object",
      "job_status",
      "list_buckets",
      "list_jobs",
      "list_object_versions",
      "list_objects",
      "presign_url",
      "put_object",
      "query_objects",
      "search_objects",
      "storage_usage",
      "upload_directory",
      "upload_file",
    ]);
    const listed = (await client.callTool({ name: "list_buckets", arguments: {} })) as unknown as {
      structuredContent: { buckets: { name: string }[] };
    };
    expect(listed.structuredContent.buckets.map((b) => b.name)).toContain(bucket);
    const read = (await client.callTool({
      name: "get_object",
      arguments: { bucket_name: bucket, object_key: "inside.txt" },
    })) as unknown as { content: { text: string }[] };
    expect(read.content[0]!.text).toContain("read from inside a container");
  } finally {
    await client.close();
  }
  // --rm left nothing behind.
  const left = Bun.spawnSync(
    ["podman", "ps", "-a", "--filter", `name=store-mcp-it-${process.pid}`, "--format", "{{.Names}}"],
    { env: { ...process.env, ...env } },
  );
  expect(left.stdout.toString().trim()).toBe("");
}, 60_000);

test("SIGTERM to the container (PID 1 is the server): it exits 0 at once", async () => {
  const name = `store-mcp-term-${process.pid}`;
  const proc = Bun.spawn(["podman", ...runArgs(name)], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "", ...env, ...s3Env() },
  });
  proc.stdin.write(
    `${JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    })}\n`,
  );
  proc.stdin.flush();
  const reader = proc.stdout.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  expect(first).toContain('"serverInfo"');
  const started = Date.now();
  Bun.spawnSync(["podman", "kill", "--signal", "TERM", name], { env: { ...process.env, ...env } });
  expect(await proc.exited).toBe(0);
  // podman's default stop timeout is 10 s: well under it means the server itself handled the signal.
  expect(Date.now() - started).toBeLessThan(5000);
}, 60_000);

test("HTTP mode: `podman run -p … IMAGE --transport http --listen 0.0.0.0:8787` with a token answers through the port mapping", async () => {
  const name = `store-mcp-http-${process.pid}`;
  const hostPort = freePort();
  const token = "container-token-0123456789abcdef";
  // The container's own network (not the host's): it reaches the store through a forwarder on the host's bridge side.
  const forwarder = forwardAllInterfaces(new URL(s3().endpoint));
  // The host as the container's network sees it: its bridge's gateway (an IP: Ceph would read a host name as a bucket).
  const gateway = Bun.spawnSync(
    ["podman", "network", "inspect", "podman", "--format", "{{range .Subnets}}{{.Gateway}}{{end}}"],
    { env: { ...process.env, ...env } },
  )
    .stdout.toString()
    .trim();
  const vars = {
    ...s3Env(),
    STORE_ENDPOINT_URL: `http://${gateway}:${forwarder.port}`,
    STORE_HTTP_TOKENS: `ci:${token}`,
  };
  const proc = Bun.spawn(
    [
      "podman",
      "run",
      "--rm",
      "--pull=never",
      "--name",
      name,
      "-p",
      `127.0.0.1:${hostPort}:8787`,
      ...Object.keys(vars).flatMap((v) => ["-e", v]),
      IMAGE,
      "--transport",
      "http",
      "--listen",
      "0.0.0.0:8787",
    ],
    { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "", ...env, ...vars } },
  );
  try {
    const url = `http://127.0.0.1:${hostPort}/mcp`;
    const deadline = Date.now() + 20_000;
    while (
      !(await fetch(url.replace("/mcp", "/healthz")).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (proc.exitCode !== null || Date.now() > deadline)
        throw new Error(`the container did not answer: ${await new Response(proc.stderr).text()}`);
      await Bun.sleep(100);
    }
    expect(
      (await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status,
    ).toBe(401);
    const client = await connectHttp(url, token);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("list_objects");
      const listed = await client.callTool({ name: "list_buckets", arguments: {} });
      expect(JSON.stringify(listed.structuredContent ?? listed.content)).toContain(bucket);
    } finally {
      await client.close();
    }
  } finally {
    Bun.spawnSync(["podman", "kill", "--signal", "TERM", name], { env: { ...process.env, ...env } });
    expect(await proc.exited).toBe(0);
    forwarder.stop();
  }
}, 90_000);

/** A TCP forwarder on every interface to `target` (the store listens on loopback only). */
function forwardAllInterfaces(target: URL): { port: number; stop(): void } {
  const server = Bun.listen<{ peer?: import("bun").Socket<undefined>; pending: Uint8Array[] }>({
    hostname: "0.0.0.0",
    port: 0,
    socket: {
      open(client) {
        client.data = { pending: [] };
        void Bun.connect({
          hostname: target.hostname,
          port: Number(target.port),
          socket: {
            open(upstream) {
              client.data.peer = upstream as never;
              for (const chunk of client.data.pending) upstream.write(chunk);
            },
            data: (_s, chunk) => void client.write(chunk),
            close: () => void client.end(),
            error: () => void client.end(),
          },
        });
      },
      data(client, chunk) {
        if (client.data.peer) client.data.peer.write(chunk);
        else client.data.pending.push(new Uint8Array(chunk));
      },
      close: (client) => void client.data.peer?.end(),
    },
  });
  return { port: server.port, stop: () => server.stop(true) };
}
