/**
 * One test per place src/mcp/sdk-internals.ts reaches past the MCP SDK's
 * public API, each written for @modelcontextprotocol/server 2.4.0 and run
 * against a real McpServer over the SDK's in-memory transport. After an SDK
 * upgrade, the first test fails until each touchpoint below has been re-read
 * against the new version.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { InMemoryTransport, type JSONRPCMessage, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import {
  installPromptHandlers,
  installToolHandlers,
  requestMethods,
  SDK_WRITTEN_FOR,
  wrapRequestHandler,
} from "../../../src/mcp/sdk-internals.ts";

/** A server on one end of an in-memory pair, initialized, and a way to call it. */
async function connected(prepare: (mcp: McpServer) => void) {
  const mcp = new McpServer({ name: "t", version: "0" });
  prepare(mcp);
  const [client, server] = InMemoryTransport.createLinkedPair();
  const seen: JSONRPCMessage[] = [];
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  client.onmessage = (m) => {
    seen.push(m);
    const id = (m as { id?: number }).id;
    if (id !== undefined && waiting.has(id)) waiting.get(id)!(m as Record<string, unknown>);
  };
  await mcp.connect(server);
  await client.start();
  let next = 1;
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      void client.send({ jsonrpc: "2.0", id, method, params } as JSONRPCMessage);
    });
  const init = await call("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "c", version: "0" },
  });
  await client.send({ jsonrpc: "2.0", method: "notifications/initialized" } as JSONRPCMessage);
  return {
    mcp,
    call,
    init: init.result as { capabilities: Record<string, unknown> },
    notifications: () => seen.filter((m) => !("id" in m)),
  };
}

describe(`the SDK internals this server uses (written for @modelcontextprotocol/server ${SDK_WRITTEN_FOR})`, () => {
  test("the installed SDK is the version the touchpoints were written for", () => {
    const installed = JSON.parse(
      readFileSync(require.resolve("@modelcontextprotocol/server/package.json"), "utf8"),
    ).version;
    expect(
      installed,
      "a new SDK: re-read each touchpoint in src/mcp/sdk-internals.ts, then update SDK_WRITTEN_FOR",
    ).toBe(SDK_WRITTEN_FOR);
  });

  test("installToolHandlers: tools capability declared, handlers in place before any tool, no list_changed on later registration", async () => {
    const { mcp, call, init, notifications } = await connected(installToolHandlers);
    expect(init.capabilities.tools).toBeDefined();
    mcp.registerTool("late", { inputSchema: z.object({ n: z.number() }) }, async ({ n }) => ({
      content: [{ type: "text", text: `n=${n}` }],
    }));
    const listed = (await call("tools/list")).result as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toEqual(["late"]);
    const called = (await call("tools/call", { name: "late", arguments: { n: 2 } })).result as {
      content: { text: string }[];
    };
    expect(called.content[0]!.text).toBe("n=2");
    expect(notifications().map((m) => (m as { method: string }).method)).not.toContain(
      "notifications/tools/list_changed",
    );
  });

  test("wrapRequestHandler: the wrapper sees each request and the original answers it", async () => {
    const seen: unknown[] = [];
    const { mcp, call } = await connected((mcp) => {
      installToolHandlers(mcp);
      wrapRequestHandler(
        mcp,
        "tools/call",
        (original) => (request, extra) => (seen.push(request.params?.name), original(request, extra)),
      );
    });
    mcp.registerTool("echo", { inputSchema: z.object({ s: z.string() }) }, async ({ s }) => ({
      content: [{ type: "text", text: s }],
    }));
    const good = (await call("tools/call", { name: "echo", arguments: { s: "hi" } })).result as {
      content: { text: string }[];
    };
    expect(good.content[0]!.text).toBe("hi");
    // A schema refusal comes back as an error result (what sdk-hooks.ts tells apart by re-checking the schema).
    const bad = (await call("tools/call", { name: "echo", arguments: { s: 1 } })).result as { isError?: boolean };
    expect(bad.isError).toBe(true);
    expect(seen).toEqual(["echo", "echo"]);
    expect(() => wrapRequestHandler(mcp, "no/such", (h) => h)).toThrow("no/such handler was not found");
  });

  test("requestMethods: the methods the SDK answers, the tools' and prompts' installed here included", async () => {
    const { mcp } = await connected((mcp) => {
      installToolHandlers(mcp);
      installPromptHandlers(mcp);
    });
    expect(requestMethods(mcp)).toEqual(
      expect.arrayContaining(["initialize", "ping", "tools/list", "tools/call", "prompts/list", "prompts/get"]),
    );
  });

  test("installPromptHandlers: prompts and completions declared, handlers in place, no list_changed on later registration", async () => {
    const { mcp, call, init, notifications } = await connected((mcp) => {
      installPromptHandlers(mcp);
      wrapRequestHandler(mcp, "prompts/get", (original) => (request, extra) => original(request, extra));
      wrapRequestHandler(mcp, "completion/complete", (original) => (request, extra) => original(request, extra));
    });
    expect(init.capabilities.prompts).toBeDefined();
    expect(init.capabilities.completions).toBeDefined();
    mcp.registerPrompt("p", { description: "d" }, () => ({
      messages: [{ role: "user", content: { type: "text", text: "t" } }],
    }));
    const got = (await call("prompts/get", { name: "p" })).result as { messages: unknown[] };
    expect(got.messages).toHaveLength(1);
    expect(notifications().map((m) => (m as { method: string }).method)).not.toContain(
      "notifications/prompts/list_changed",
    );
  });

  test("the connection a server serves is its public transport", async () => {
    const { mcp } = await connected(installToolHandlers);
    expect(mcp.server.transport).toBeInstanceOf(InMemoryTransport);
  });
});
