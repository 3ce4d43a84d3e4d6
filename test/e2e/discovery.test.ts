/**
 * Discovery in remote mode, through a real reverse proxy (nginx) without a
 * token: the Server Card at <mcp-url>/server-card and the MCP Catalog at
 * /.well-known/mcp/catalog.json pointing at it — the constraints of the
 * server-card extension's schema (modelcontextprotocol/experimental-ext-server-card,
 * schema.json) checked field by field, CORS open, cached with an ETag, and
 * nothing about the deployment the operator did not configure.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type HttpBinary, startHttpBinary } from "../helpers/http.ts";
import { type Nginx, startNginx } from "../helpers/nginx.ts";
import { s3Env } from "../helpers/s3.ts";

const PUBLIC = "https://mcp.example.test/mcp";
let replica: HttpBinary;
let proxy: Nginx;
let origin: string;

beforeAll(async () => {
  // The operator's public URL (--resource-url): what the card and the catalog say, whatever the proxy's address.
  replica = await startHttpBinary({
    env: {
      ...s3Env(),
      STORE_HTTP_TOKENS: "team:discovery-token-0123456789abcdef",
      STORE_RESOURCE_URL: PUBLIC,
      STORE_ALLOWED_HOSTS: "127.0.0.1,localhost,mcp.example.test",
    },
  });
  proxy = await startNginx([replica.port]);
  origin = new URL(proxy.url).origin;
}, 60_000);
afterAll(async () => {
  await proxy.stop();
  replica.proc.kill("SIGKILL");
});

test("the Server Card: public, its media type, every field the schema requires and no tool list", async () => {
  const res = await fetch(`${origin}/mcp/server-card`, { headers: { accept: "application/mcp-server-card+json" } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/mcp-server-card+json");
  expect(res.headers.get("access-control-allow-origin")).toBe("*");
  expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
  const card = (await res.json()) as Record<string, any>;
  // The schema's ServerCard: required $schema (the v2 URL), name (reverse DNS, one slash), description (1-100), version.
  expect(card.$schema).toBe("https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json");
  expect(card.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
  expect(card.description.length).toBeGreaterThanOrEqual(1);
  expect(card.description.length).toBeLessThanOrEqual(100);
  expect(card.title.length).toBeLessThanOrEqual(100);
  expect(card.version).toMatch(/^\d+\.\d+\.\d+/);
  // Only the schema's members (additionalProperties: false): no tools, resources or prompts.
  for (const key of Object.keys(card))
    expect([
      "$schema",
      "_meta",
      "description",
      "icons",
      "name",
      "remotes",
      "repository",
      "title",
      "version",
      "websiteUrl",
    ]).toContain(key);
  expect(card.repository).toMatchObject({ source: "github", url: expect.stringMatching(/^https:\/\/github\.com\//) });
  expect(card.remotes).toHaveLength(1);
  const remote = card.remotes[0];
  expect(remote.type).toBe("streamable-http");
  expect(remote.url).toBe(PUBLIC);
  expect(remote.url).toMatch(/^(https?:\/\/[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)$/);
  expect(remote.supportedProtocolVersions).toContain("2026-07-28");
  expect(remote.supportedProtocolVersions).toContain("2025-11-25");
  expect(remote.supportedProtocolVersions).toContain("2025-06-18");
  expect(remote.headers).toEqual([
    expect.objectContaining({ name: "Authorization", isRequired: true, isSecret: true }),
  ]);
  // Nothing the operator did not configure: not the store's endpoint, not the replica's own address.
  const text = JSON.stringify(card);
  expect(text).not.toContain(new URL(s3Env().STORE_ENDPOINT_URL!).host);
  expect(text).not.toContain(`127.0.0.1:${replica.port}`);
});

test("the catalog points at the card, which the client then fetches; both are cached with an ETag and open to any origin", async () => {
  const res = await fetch(`${origin}/.well-known/mcp/catalog.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("access-control-allow-origin")).toBe("*");
  const catalog = (await res.json()) as {
    specVersion: string;
    entries: { identifier: string; displayName: string; type: string; url: string }[];
  };
  expect(catalog.specVersion).toBe("draft");
  expect(catalog.entries).toEqual([
    {
      identifier: "urn:air:mcp.example.test:store-mcp-server",
      displayName: expect.any(String),
      type: "application/mcp-server-card+json",
      url: `${PUBLIC}/server-card`,
    },
  ]);
  // The card's path, as the catalog gives it, through the proxy.
  const card = await fetch(`${origin}${new URL(catalog.entries[0]!.url).pathname}`);
  expect(card.status).toBe(200);
  const etag = card.headers.get("etag")!;
  expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
  const again = await fetch(`${origin}/mcp/server-card`, { headers: { "if-none-match": etag } });
  expect(again.status).toBe(304);
  const preflight = await fetch(`${origin}/mcp/server-card`, {
    method: "OPTIONS",
    headers: { origin: "https://elsewhere.example", "access-control-request-method": "GET" },
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get("access-control-allow-methods")).toBe("GET");
  expect((await fetch(`${origin}/mcp/server-card`, { method: "POST" })).status).toBe(405);
  // The MCP endpoint itself still wants its token.
  expect(
    (
      await fetch(`${origin}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          host: "127.0.0.1",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      })
    ).status,
  ).toBe(401);
});
