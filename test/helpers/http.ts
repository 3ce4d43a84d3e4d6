/** The compiled binary in remote mode (--transport http), and MCP clients over Streamable HTTP. */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { freePort } from "../../scripts/s3/local-servers.ts";
import { requireBinary } from "./mcp.ts";
import { tracked } from "./processes.ts";

export interface HttpBinary {
  /** http://127.0.0.1:PORT/mcp */
  url: string;
  port: number;
  proc: ReturnType<typeof Bun.spawn>;
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
}

/** Starts the binary with --transport http on a free loopback port and waits until it is ready. */
export async function startHttpBinary(
  opts: { env?: Record<string, string>; args?: string[]; port?: number } = {},
): Promise<HttpBinary> {
  const port = opts.port ?? freePort();
  const proc = tracked(
    Bun.spawn([requireBinary(), "--transport", "http", "--listen", `127.0.0.1:${port}`, ...(opts.args ?? [])], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...opts.env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    }),
  );
  let stderr = "";
  void (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) stderr += new TextDecoder().decode(chunk);
  })();
  const deadline = Date.now() + 10_000;
  while (!stderr.includes("ready on")) {
    if (proc.exitCode !== null || Date.now() > deadline)
      throw new Error(`the HTTP server did not start (exit ${proc.exitCode}): ${stderr}`);
    await Bun.sleep(20);
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    proc,
    stderr: () => stderr,
    async stop() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}

/** An MCP client over Streamable HTTP (the SDK's transport), with a bearer token if given. */
export async function connectHttp(url: string, token?: string, headers: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } },
  });
  const client = new Client({ name: "store-mcp-http-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** One JSON-RPC POST to /mcp, as a raw HTTP client sends it. */
export function rpc(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** The JSON-RPC message of an answer, whether the server sent it as JSON or as the first event of an SSE stream. */
export async function rpcAnswer(res: Response): Promise<{ result?: any; error?: unknown; text: string }> {
  const text = await res.text();
  const data = text.includes("data: ")
    ? text
        .split("\n")
        .find((l) => l.startsWith("data: "))!
        .slice(6)
    : text;
  return { ...(JSON.parse(data) as { result?: any; error?: unknown }), text };
}
