/**
 * Discovery in remote mode: the MCP Server Card (SEP-2127) at
 * `<mcp-url>/server-card` and the MCP Catalog pointing at it at
 * `/.well-known/mcp/catalog.json` — what a client reads before it connects:
 * who the server is and where to connect, no tool list. Public (no token),
 * read-only, so open to every origin (CORS `*`), cached for an hour with an
 * ETag. They say nothing about the deployment beyond what the operator
 * configured: the public MCP URL (--resource-url) and whether a token is
 * needed — no store endpoint, bucket or internal host name. Beside them
 * the OAuth protected resource metadata (RFC 9728), also read before a
 * token is.
 */
import { createHash } from "node:crypto";
import pkg from "../../package.json" with { type: "json" };
import type { HttpConfig } from "../config/http-config.ts";

export const SERVER_CARD_TYPE = "application/mcp-server-card+json";
export const CATALOG_PATH = "/.well-known/mcp/catalog.json";
const CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json";
/** The name the MCP Registry knows the server by: the Server Card's and the release's server.json (scripts/lib/server-json.ts). */
export const REGISTRY_NAME = "io.github.store-mcp-server/store-mcp-server";
const TITLE = "Object storage";
const DESCRIPTION = "Browse, read, upload, download and copy objects in S3-compatible object stores.";
const OPEN = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET",
  "access-control-allow-headers": "Content-Type",
};

interface Document {
  body: string;
  type: string;
  etag: string;
}

export interface Discovery {
  /** The answer for `path`, or undefined when it is not a discovery path. */
  answer(path: string, req: Request): Response | undefined;
}

/** `resourceUrl`: the MCP endpoint's public URL; `protocolVersions`: what it speaks; `tokenRequired`: callers must send Authorization. */
export function discovery(resourceUrl: string, protocolVersions: readonly string[], tokenRequired: boolean): Discovery {
  const mcpUrl = resourceUrl.replace(/\/+$/, "");
  const cardUrl = `${mcpUrl}/server-card`;
  const card = {
    $schema: CARD_SCHEMA,
    name: REGISTRY_NAME,
    title: TITLE,
    description: DESCRIPTION,
    version: pkg.version,
    repository: { source: "github", url: `https://github.com/${pkg.repository.replace(/^github:/, "")}` },
    remotes: [
      {
        type: "streamable-http",
        url: mcpUrl,
        supportedProtocolVersions: [...protocolVersions],
        ...(tokenRequired
          ? {
              headers: [
                {
                  name: "Authorization",
                  description: "Bearer token (a static token or an OAuth access token, as the operator set up).",
                  isRequired: true,
                  isSecret: true,
                },
              ],
            }
          : {}),
      },
    ],
  };
  const catalog = {
    specVersion: "draft",
    entries: [
      {
        identifier: `urn:air:${new URL(mcpUrl).hostname}:store-mcp-server`,
        displayName: TITLE,
        type: SERVER_CARD_TYPE,
        url: cardUrl,
      },
    ],
  };
  const documents = new Map<string, Document>([
    [new URL(cardUrl).pathname, documentOf(card, SERVER_CARD_TYPE)],
    [CATALOG_PATH, documentOf(catalog, "application/json")],
  ]);
  return {
    answer(path, req) {
      const doc = documents.get(path);
      if (!doc) return undefined;
      if (req.method === "OPTIONS")
        return new Response(null, { status: 204, headers: { ...OPEN, "access-control-max-age": "600" } });
      if (req.method !== "GET" && req.method !== "HEAD")
        return new Response(null, { status: 405, headers: { ...OPEN, allow: "GET, HEAD, OPTIONS" } });
      const headers = { ...OPEN, "content-type": doc.type, "cache-control": "public, max-age=3600", etag: doc.etag };
      if (
        req.headers
          .get("if-none-match")
          ?.split(",")
          .some((tag) => tag.trim() === doc.etag)
      )
        return new Response(null, { status: 304, headers });
      return new Response(req.method === "HEAD" ? null : doc.body, { status: 200, headers });
    },
  };
}

function documentOf(value: unknown, type: string): Document {
  const body = JSON.stringify(value, null, 2);
  return { body, type, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"` };
}

/** RFC 9728: which authorization server issues tokens for this resource, and the scopes it understands. */
export function protectedResourceMetadata(config: HttpConfig): Record<string, unknown> {
  const names = config.oauth!.scopeNames;
  return {
    resource: config.resourceUrl,
    authorization_servers: [config.oauth!.issuer],
    scopes_supported: [names.read, names.write, names.delete],
    bearer_methods_supported: ["header"],
    resource_name: "store-mcp-server",
  };
}
