/**
 * The MCP Bundle, built from the locally compiled binary with the official
 * mcpb CLI: it validates, unpacks, and its command — run exactly as the
 * manifest says, with the user's settings filled in — answers an MCP client.
 */

import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import pkg from "../../package.json" with { type: "json" };
import { bundleInfo, packBundle, unpackBundle } from "../../scripts/lib/mcpb.ts";
import { tempDir } from "../helpers/files.ts";
import { requireBinary } from "../helpers/mcp.ts";
import { freshBucket, s3 } from "../helpers/s3.ts";

test("the bundle unpacks and its manifest's command, with the user's settings, serves the tools", async () => {
  const bucket = await freshBucket("bundle");
  const out = tempDir("mcpb");
  const file = packBundle(requireBinary(), "linux-x64", out);
  expect(file.endsWith(`store-mcp-server-${pkg.version}-linux-x64.mcpb`)).toBe(true);
  expect(bundleInfo(file)).toContain(`store-mcp-server-${pkg.version}-linux-x64.mcpb`);
  const dir = join(out, "unpacked");
  unpackBundle(file, dir);
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
  expect(manifest).toMatchObject({ name: "store-mcp-server", version: pkg.version, server: { type: "binary" } });
  expect(manifest.user_config.secret_access_key.sensitive).toBe(true);

  // What a desktop client does: fill ${__dirname} and ${user_config.*} in, then start the command.
  const allowed = tempDir("bundle-allowed");
  const settings: Record<string, string> = {
    access_key_id: s3().accessKeyId,
    secret_access_key: s3().secretAccessKey,
    region: s3().region,
    endpoint_url: s3().endpoint,
    allowed_directory: allowed,
    read_only: "true",
  };
  const fill = (v: string) =>
    v.replaceAll("${__dirname}", dir).replace(/\$\{user_config\.(\w+)\}/g, (_, k: string) => settings[k] ?? "");
  const { command, args, env } = manifest.server.mcp_config as {
    command: string;
    args: string[];
    env: Record<string, string>;
  };
  const transport = new StdioClientTransport({
    command: fill(command),
    args: args.map(fill),
    env: { PATH: process.env.PATH ?? "", ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, fill(v)])) },
    stderr: "pipe",
  });
  const client = new Client({ name: "bundle-test", version: "1" });
  await client.connect(transport);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    // read_only: true reached the server; the allowed directory too (get_object download is offered there).
    expect(names).toContain("list_buckets");
    expect(names).not.toContain("upload_file");
    const listed = await client.callTool({ name: "list_buckets", arguments: {} });
    expect(JSON.stringify(listed.structuredContent)).toContain(bucket);
  } finally {
    await client.close();
  }
}, 120_000);
