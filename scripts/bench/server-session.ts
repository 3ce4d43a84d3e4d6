/** The compiled server under test, started as an MCP client starts it. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export interface ServerSession {
  pid: number;
  /** Bytes of the tools/list answer's JSON, as the client received it. */
  toolsListBytes: number;
  call(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<CallToolResult & { structuredContent?: Record<string, any> }>;
  close(): Promise<void>;
}

export async function startServer(
  binary: string,
  env: Record<string, string>,
  allowedDir: string,
  extraArgs: string[] = [],
): Promise<ServerSession> {
  const transport = new StdioClientTransport({
    command: binary,
    args: ["--allowed-dir", allowedDir, ...extraArgs],
    env: { PATH: process.env.PATH ?? "", ...env },
    stderr: "ignore",
  });
  const client = new Client({ name: "store-mcp-bench", version: "1" });
  await client.connect(transport);
  const listed = await client.listTools();
  return {
    pid: transport.pid!,
    toolsListBytes: JSON.stringify(listed).length,
    async call(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args }, undefined, {
        timeout: 600_000,
      })) as CallToolResult & { structuredContent?: Record<string, any> };
      if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content).slice(0, 500)}`);
      return result;
    },
    close: () => client.close(),
  };
}
