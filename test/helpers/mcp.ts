/** MCP clients for tests: over stdio to the compiled binary, or in memory to createServer. */

import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../../src/config/config.ts";
import { trackPid } from "./processes.ts";
import { s3 } from "./s3.ts";

/** The binary under test; STORE_TEST_BINARY names another (an earlier build, to watch a new test fail on it). */
export const BINARY = process.env.STORE_TEST_BINARY || resolve(import.meta.dir, "../../dist/store-mcp-server");

export function requireBinary(): string {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`bun run build\` first (bun run test does it).`);
  return BINARY;
}

/**
 * A binary the tests of one file share, connected anew before a test when an earlier one left it closed (a test that
 * timed out mid-call, a crash): one failure stays one, instead of every later test failing "Not connected".
 */
export function sharedBinary(opts: () => Parameters<typeof connectBinary>[0]) {
  let session: Awaited<ReturnType<typeof connectBinary>> | undefined;
  let closed = true;
  return {
    get client(): Client {
      if (!session) throw new Error("the shared server is not connected: call ensure() first (beforeAll/beforeEach)");
      return session.client;
    },
    async ensure(): Promise<void> {
      if (!closed) return;
      await session?.close().catch(() => {});
      session = await connectBinary(opts());
      closed = false;
      session.client.onclose = () => void (closed = true);
    },
    close: async () => session?.close(),
  };
}

/** Starts the compiled binary as an MCP client would, and connects to it. */
export async function connectBinary(
  opts: { args?: string[]; env?: Record<string, string>; cwd?: string; capabilities?: Record<string, unknown> } = {},
): Promise<{ client: Client; stderr: () => string; close: () => Promise<void>; pid: number }> {
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: opts.args ?? [],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...opts.env },
    cwd: opts.cwd,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client(
    { name: "store-mcp-test", version: "1.0.0" },
    opts.capabilities ? { capabilities: opts.capabilities as never } : undefined,
  );
  await client.connect(transport);
  trackPid(transport.pid ?? undefined);
  return { client, stderr: () => stderr, close: () => client.close(), pid: transport.pid! };
}

/** The test server's configuration, as resolveConfig would produce it. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  const server = s3();
  return {
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    credentialSource: "test",
    region: server.region,
    endpointUrl: server.endpoint,
    forcePathStyle: true,
    checksums: "WHEN_REQUIRED",
    provider: "ceph",
    connectTimeoutMs: 5000,
    requestTimeoutMs: 30000,
    callBudgetSeconds: 0,
    maxRunningJobs: 4,
    operationTimeoutMs: 30000,
    multipartCopyThreshold: 5 * 1024 ** 3,
    maxAttempts: 3,
    logLevel: "error",
    allowedDirs: [],
    readOnly: false,
    buckets: [],
    allowBroadDirs: false,
    allowDelete: false,
    allowAdmin: false,
    tools: [],
    transport: "stdio",
    resourceLinks: true,
    stores: [],
    ...overrides,
  };
}

/** The test server's configuration addressing buckets in the URL's path, or as virtual hosts (localhost's names). */
export const addressedConfig = (style: "path" | "virtual-host") =>
  style === "path"
    ? testConfig()
    : testConfig({ forcePathStyle: false, endpointUrl: s3().endpoint.replace("127.0.0.1", "localhost") });

/** Calls a tool and returns its result typed loosely for assertions. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult & { structuredContent?: Record<string, any> }> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult & {
    structuredContent?: Record<string, any>;
  };
}

/** All text blocks of a result, joined. */
export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}
