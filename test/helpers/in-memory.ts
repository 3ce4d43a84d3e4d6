/**
 * The server in this process, over an in-memory transport: for the tool tests (test/tools), which need no binary.
 * Apart from mcp.ts so the end-to-end files, which talk to the binary, do not load the whole server to start.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Config } from "../../src/config/config.ts";
import { createServer, type ServerOptions } from "../../src/mcp/server.ts";
import { createLogger } from "../../src/runtime/log.ts";
import { createS3Storage } from "../../src/storage/index.ts";
import { testConfig } from "./mcp.ts";

/** createServer wired to the test S3 server, connected to a Client in memory. */
export async function connectInMemory(
  options: Partial<ServerOptions> = {},
  config: Partial<Config> = {},
): Promise<Client> {
  const cfg = testConfig(config);
  const server = createServer(
    { region: cfg.region, allowedDirs: [], cwd: process.cwd(), readOnly: false, buckets: [], ...options },
    { storage: createS3Storage(cfg), log: createLogger("error") },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "store-mcp-test", version: "1.0.0" });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}
