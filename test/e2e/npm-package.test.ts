/**
 * The npm distribution, packed from the locally built binary: the launcher
 * package and this platform's binary package, installed from their tarballs
 * into an empty folder with npm offline (nothing downloaded), then run the
 * way users run it — `npx store-mcp-server` — for --version and for a
 * tools/list over stdio through the launcher; SIGTERM reaches the binary.
 */

import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import pkg from "../../package.json" with { type: "json" };
import { npmPack, writeLauncherPackage, writePlatformPackage } from "../../scripts/lib/npm-packages.ts";
import { tempDir } from "../helpers/files.ts";
import { requireBinary } from "../helpers/mcp.ts";
import { s3Env } from "../helpers/s3.ts";

test("npm pack, an offline install from the tarballs, then npx store-mcp-server: --version, tools/list, SIGTERM", async () => {
  const work = tempDir("npm-dist");
  writeLauncherPackage(join(work, "launcher"));
  writePlatformPackage(join(work, "linux-x64"), "linux-x64", requireBinary());
  const tarballs = [npmPack(join(work, "launcher"), work), npmPack(join(work, "linux-x64"), work)];
  const launcherManifest = JSON.parse(readFileSync(join(work, "launcher", "package.json"), "utf8"));
  expect(launcherManifest.scripts).toBeUndefined(); // no install scripts
  expect(launcherManifest.optionalDependencies["@store-mcp-server/linux-x64"]).toBe(pkg.version);

  const app = tempDir("npm-app");
  const npmEnv = {
    PATH: process.env.PATH ?? "",
    HOME: app,
    npm_config_cache: join(app, ".npm-cache"),
    npm_config_update_notifier: "false",
  };
  const install = Bun.spawnSync(["npm", "install", "--offline", "--no-audit", "--no-fund", ...tarballs], {
    cwd: app,
    env: npmEnv,
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(install.exitCode, install.stderr.toString()).toBe(0);
  expect(existsSync(join(app, "node_modules/@store-mcp-server/linux-x64/bin/store-mcp-server"))).toBe(true);

  const version = Bun.spawnSync(["npx", "--offline", "store-mcp-server", "--version"], {
    cwd: app,
    env: npmEnv,
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(version.stdout.toString().trim(), version.stderr.toString()).toBe(pkg.version);

  const transport = new StdioClientTransport({
    command: "npx",
    args: ["--offline", "store-mcp-server"],
    cwd: app,
    env: { ...npmEnv, ...s3Env() },
    stderr: "pipe",
  });
  const client = new Client({ name: "npx-test", version: "1" });
  await client.connect(transport);
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("list_buckets");
  } finally {
    await client.close();
  }

  // Signals pass through the launcher: the server exits 0 on SIGTERM, and so does the launcher.
  const launcher = Bun.spawn(["node", join(app, "node_modules/.bin/store-mcp-server")], {
    cwd: app,
    env: { ...npmEnv, ...s3Env() },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  // Once the server has answered (the launcher is up and has started it, however slow the machine), SIGTERM.
  launcher.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
  );
  launcher.stdin.flush();
  const reader = launcher.stdout.getReader();
  for (let said = ""; !said.includes('"result"'); ) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the launcher ended before answering: ${said}`);
    said += new TextDecoder().decode(value);
  }
  launcher.kill("SIGTERM");
  expect(await launcher.exited).toBe(0);
}, 120_000);
