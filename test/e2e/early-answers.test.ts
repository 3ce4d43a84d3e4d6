/**
 * The stdio start answers `initialize` and the first `tools/list` before the
 * MCP SDK is loaded (startup/early-answers.ts), then replays them to the
 * SDK: its answers must be exactly the same, for every configuration that
 * changes them (tools offered, stores, jobs, the object browser, prompts)
 * and every protocol version a client may ask for. A difference is logged as
 * an error, which these sessions must not show; the SDK's own later answers
 * (a second tools/list) are compared too, and a 2026-07-28 opening is left to
 * the SDK.
 */
import { describe, expect, test } from "bun:test";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { fourMoreStores } from "../../scripts/bench/cold-start.ts";
import { HANDSHAKE_VERSIONS } from "../../src/startup/early-answers.ts";
import { rawSession } from "../helpers/raw-stdio.ts";

const ENV = {
  STORE_ENDPOINT_URL: "http://127.0.0.1:9",
  STORE_ACCESS_KEY_ID: "early",
  STORE_SECRET_ACCESS_KEY: "early-secret",
  STORE_REGION: "us-east-1",
  STORE_STATE_DIR: "off",
};
const envOf = (pairs: string[]) =>
  Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]));

const CONFIGS: { name: string; args: string[]; env?: Record<string, string> }[] = [
  { name: "default", args: [] },
  { name: "read-only", args: ["--read-only"] },
  { name: "every tool", args: ["--allow-delete", "--allow-admin"] },
  { name: "no listing tools (no object browser)", args: ["--tools", "get_object,put_object"] },
  { name: "no get_object (no object resources)", args: ["--tools", "list_buckets,list_objects"] },
  { name: "jobs", args: ["--call-budget", "20"] },
  { name: "five stores", args: [], env: envOf(fourMoreStores("http://127.0.0.1:9")) },
];

const answer = (lines: string[], id: number) =>
  JSON.parse(lines.find((l) => JSON.parse(l).id === id)!) as { result?: Record<string, unknown>; error?: unknown };

test("the versions answered early are the SDK's 2025 handshake versions, in its order", () => {
  expect([...HANDSHAKE_VERSIONS]).toEqual(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v < "2026"));
});

describe.each(CONFIGS)("$name", ({ args, env }) => {
  test("initialize and tools/list answered before the SDK loads are what the SDK answers, for any version asked", async () => {
    for (const version of ["2025-11-25", "2025-06-18", "2024-11-05", "1999-01-01"]) {
      const init = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: version, capabilities: { roots: {} }, clientInfo: { name: "early", version: "1" } },
      };
      const run = await rawSession(args, { ...ENV, ...env }, [
        init,
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        { jsonrpc: "2.0", id: 3, method: "ping" },
        { jsonrpc: "2.0", id: 4, method: "tools/list" },
      ]);
      expect(run.stderr, `${version}: ${run.stderr.slice(-800)}`).not.toContain("differs from the SDK's");
      expect(run.stderr).not.toContain("[error]");
      const initialized = answer(run.stdoutLines, 1).result!;
      expect(initialized.protocolVersion, version).toBe(version === "1999-01-01" ? "2025-11-25" : version);
      expect(initialized.serverInfo).toMatchObject({ name: "store-mcp-server" });
      // The list answered early and the one the SDK answered later are the same.
      expect(answer(run.stdoutLines, 2).result).toEqual(answer(run.stdoutLines, 4).result!);
      expect((answer(run.stdoutLines, 2).result!.tools as unknown[]).length).toBeGreaterThan(0);
      // Every request answered exactly once (the server's own roots/list request aside: the client declared roots).
      const answered = run.stdoutLines
        .map((l) => JSON.parse(l) as { id?: number; method?: string })
        .filter((m) => m.method === undefined);
      expect(answered.map((m) => m.id).sort()).toEqual([1, 2, 3, 4]);
      expect(run.stdoutLines.some((l) => JSON.parse(l).method === "roots/list")).toBe(true);
    }
  }, 60_000);
});

test("a 2026-07-28 opening, a malformed initialize and a paged tools/list are left to the SDK", async () => {
  const modern = await rawSession([], ENV, [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "early", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    },
  ]);
  expect(answer(modern.stdoutLines, 1).result).toMatchObject({ supportedVersions: ["2026-07-28"] });
  const malformed = await rawSession([], ENV, [
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } },
  ]);
  expect(answer(malformed.stdoutLines, 1).error).toBeDefined();
  const paged = await rawSession([], ENV, [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "early", version: "1" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list", params: { cursor: "x" } },
  ]);
  expect(paged.stderr).not.toContain("differs from the SDK's");
  expect(paged.stdoutLines.length).toBe(2);
}, 60_000);
