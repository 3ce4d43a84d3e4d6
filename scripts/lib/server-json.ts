/**
 * MCP Registry metadata (server.json, registry schema 2025-12-11): the
 * release's bundles (with their SHA-256), the npm package and the container
 * image, at package.json's version. Written by the release build beside the
 * archives; `serverJsonProblems` checks the registry's rules the schema
 * does not say; the tests also validate it against the schema's own file
 * (test/fixtures/registry, digest-checked).
 */
import pkg from "../../package.json" with { type: "json" };
import { REGISTRY_NAME } from "../../src/transports/discovery.ts";

export const SERVER_JSON_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
const REPO = "https://github.com/store-mcp-server/store-mcp-server";
const IMAGE = "ghcr.io/store-mcp-server/store-mcp-server";

const credentials = [
  { name: "STORE_ACCESS_KEY_ID", description: "Access key ID for the store", isRequired: true, isSecret: false },
  { name: "STORE_SECRET_ACCESS_KEY", description: "Secret access key for the store", isRequired: true, isSecret: true },
  {
    name: "STORE_REGION",
    description: "Region, e.g. us-east-1 (auto for Cloudflare R2)",
    isRequired: false,
    default: "us-east-1",
  },
  {
    name: "STORE_ENDPOINT_URL",
    description: "Endpoint of an S3-compatible store; unset for AWS S3",
    isRequired: false,
  },
  {
    name: "STORE_ALLOWED_DIRS",
    description: "Local directories the tools may read and write",
    isRequired: false,
    format: "filepath",
  },
];

/** server.json for this version; `bundleSha256` maps each bundle's file name to its digest. */
export function serverJson(bundleSha256: Record<string, string>): Record<string, unknown> {
  const v = pkg.version;
  return {
    $schema: SERVER_JSON_SCHEMA,
    name: REGISTRY_NAME,
    description: "Work with any S3-compatible object store: list, read, upload, download, copy, presign.",
    repository: { url: REPO, source: "github" },
    version: v,
    websiteUrl: REPO,
    packages: [
      ...Object.entries(bundleSha256).map(([file, sha]) => ({
        registryType: "mcpb",
        identifier: `${REPO}/releases/download/v${v}/${file}`,
        version: v,
        fileSha256: sha,
        transport: { type: "stdio" },
      })),
      {
        registryType: "npm",
        registryBaseUrl: "https://registry.npmjs.org",
        identifier: pkg.name,
        version: v,
        runtimeHint: "npx",
        transport: { type: "stdio" },
        environmentVariables: credentials,
      },
      {
        registryType: "oci",
        registryBaseUrl: "https://ghcr.io",
        identifier: IMAGE.replace("ghcr.io/", ""),
        version: v,
        runtimeHint: "docker",
        transport: { type: "stdio" },
        environmentVariables: credentials,
      },
    ],
  };
}

/** Problems with a server.json under the registry schema's rules (empty: valid). */
export function serverJsonProblems(doc: any): string[] {
  const problems: string[] = [];
  const need = (ok: unknown, what: string) => void (!ok && problems.push(what));
  need(doc.$schema === SERVER_JSON_SCHEMA, `$schema must be ${SERVER_JSON_SCHEMA}`);
  need(
    typeof doc.name === "string" &&
      /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/.test(doc.name) &&
      doc.name.length >= 3 &&
      doc.name.length <= 200,
    "name: reverse-DNS namespace/name",
  );
  need(
    typeof doc.description === "string" && doc.description.length >= 1 && doc.description.length <= 100,
    "description: 1-100 characters",
  );
  const exactVersion = (v: unknown) =>
    typeof v === "string" && v.length > 0 && v.length <= 255 && v !== "latest" && !/^[\^~<>=]|\.x$|\*|\s/.test(v);
  need(exactVersion(doc.version), "version: an exact version");
  if (doc.repository !== undefined)
    need(
      typeof doc.repository.url === "string" && typeof doc.repository.source === "string",
      "repository: url and source",
    );
  need(Array.isArray(doc.packages) && doc.packages.length > 0, "packages: at least one");
  const allowed = new Set([
    "registryType",
    "registryBaseUrl",
    "identifier",
    "version",
    "fileSha256",
    "runtimeHint",
    "transport",
    "runtimeArguments",
    "packageArguments",
    "environmentVariables",
  ]);
  for (const [i, p] of (doc.packages ?? []).entries()) {
    const at = `packages[${i}]`;
    for (const key of Object.keys(p)) need(allowed.has(key), `${at}.${key} is not a package field`);
    need(typeof p.registryType === "string" && typeof p.identifier === "string", `${at}: registryType and identifier`);
    need(exactVersion(p.version), `${at}.version: an exact version`);
    need(
      ["stdio", "streamable-http", "sse"].includes(p.transport?.type) &&
        (p.transport.type === "stdio" || typeof p.transport.url === "string"),
      `${at}.transport`,
    );
    if (p.fileSha256 !== undefined || p.registryType === "mcpb")
      need(/^[a-f0-9]{64}$/.test(p.fileSha256 ?? ""), `${at}.fileSha256: 64 hex characters (required for mcpb)`);
    for (const [j, e] of (p.environmentVariables ?? []).entries()) {
      need(typeof e.name === "string", `${at}.environmentVariables[${j}].name`);
      if (e.format !== undefined)
        need(["string", "number", "boolean", "filepath"].includes(e.format), `${at}.environmentVariables[${j}].format`);
    }
  }
  return problems;
}
