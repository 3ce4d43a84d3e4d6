/**
 * The mechanism behind the cold-start figure: the stdio start answers initialize + tools/list before the MCP SDK is
 * loaded, and the SDK server built after loads no AWS SDK, no mime table, no tool module to list the tools.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

test("answering tools/list loads neither the AWS SDK nor mime-types nor any tool's module; a call loads its tool's alone", () => {
  const out = Bun.spawnSync([process.execPath, resolve(import.meta.dir, "../fixtures/start-and-list.ts")], {
    stderr: "pipe",
  });
  expect(out.stderr.toString()).toBe("");
  const loaded = JSON.parse(out.stdout.toString());
  // The tools' schemas are most of a start, and registering them as much again: each loads on its first call.
  expect(loaded).toEqual({
    tools: 23,
    awsSdk: 0,
    smithy: 0,
    mimeTypes: 0,
    toolModules: 0,
    toolsAfterACall: ["/src/tools/head-object.ts"],
    engineAfterACall: 0,
    telemetryAfterACall: 0,
  });
});

test("the stdio start answers initialize and tools/list before the MCP SDK, zod or the AWS SDK is loaded", () => {
  const out = Bun.spawnSync([process.execPath, resolve(import.meta.dir, "../fixtures/early-list.ts")], {
    stderr: "pipe",
  });
  expect(out.stderr.toString()).toBe("");
  expect(JSON.parse(out.stdout.toString())).toEqual({ answered: [1, 2], tools: 24, mcpSdk: 0, zod: 0, awsSdk: 0 });
});

test("the check can fail: importing the storage client does load the SDK", () => {
  const script =
    'await import("@aws-sdk/client-s3"); process.stdout.write(String(Object.keys(require.cache).filter((k) => k.includes("/@aws-sdk/")).length));';
  const out = Bun.spawnSync([process.execPath, "-e", script], { cwd: resolve(import.meta.dir, "../..") });
  expect(Number(out.stdout.toString())).toBeGreaterThan(0);
});

test("--version loads nothing but the entry: no CLI, no MCP SDK, no tool", () => {
  const script =
    'process.argv = [process.argv[0], "main.ts", "--version"]; const write = process.stdout.write.bind(process.stdout); let said = ""; process.stdout.write = (s) => ((said += s), true); await import("./src/main.ts"); process.stdout.write = write; const loaded = Object.keys(require.cache); process.stdout.write(JSON.stringify({ said, ours: loaded.filter((k) => k.includes("/src/")).map((k) => k.slice(k.indexOf("/src/"))), sdk: loaded.filter((k) => k.includes("@modelcontextprotocol")).length }));';
  const out = Bun.spawnSync([process.execPath, "-e", script], { cwd: resolve(import.meta.dir, "../..") });
  expect(out.stderr.toString()).toBe("");
  const { version } = JSON.parse(readFileSync(resolve(import.meta.dir, "../../package.json"), "utf8")) as {
    version: string;
  };
  expect(JSON.parse(out.stdout.toString())).toEqual({ said: `${version}\n`, ours: ["/src/main.ts"], sdk: 0 });
});
