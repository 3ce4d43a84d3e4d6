/** The MCP Registry's server.json that the release build writes: valid under the registry's 2025-12-11 schema and its rules, at package.json's version. */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import pkg from "../../package.json" with { type: "json" };
import { SERVER_JSON_SCHEMA, serverJson, serverJsonProblems } from "../../scripts/lib/server-json.ts";
import { SCHEMA_FILE, SCHEMA_SHA256, schemaErrors } from "../helpers/registry-schema.ts";

test("the schema file is the registry's own 2025-12-11 file, and server.json names it", () => {
  expect(createHash("sha256").update(readFileSync(SCHEMA_FILE)).digest("hex")).toBe(SCHEMA_SHA256);
  const schema = JSON.parse(readFileSync(SCHEMA_FILE, "utf8"));
  expect(schema.$id).toBe(SERVER_JSON_SCHEMA);
  expect((serverJson({ "x.mcpb": "a".repeat(64) }) as any).$schema).toBe(SERVER_JSON_SCHEMA);
});

test("server.json validates against the 2025-12-11 schema; a broken one does not", () => {
  const doc = serverJson({ [`store-mcp-server-${pkg.version}-linux-x64.mcpb`]: "b".repeat(64) }) as any;
  expect(schemaErrors(doc)).toEqual([]);
  const broken = structuredClone(doc);
  broken.packages[0].fileSha256 = "not-a-digest";
  delete broken.packages[1].transport;
  expect(schemaErrors(broken).length).toBeGreaterThanOrEqual(2);
});

const sha = "a".repeat(64);

test("server.json names every bundle with its digest, the npm package and the image, at package.json's version", () => {
  const doc = serverJson({ [`store-mcp-server-${pkg.version}-linux-x64.mcpb`]: sha }) as any;
  expect(serverJsonProblems(doc)).toEqual([]);
  expect(doc.version).toBe(pkg.version);
  expect(doc.packages.map((p: any) => p.registryType)).toEqual(["mcpb", "npm", "oci"]);
  expect(doc.packages[0]).toMatchObject({
    identifier: expect.stringContaining(`/releases/download/v${pkg.version}/`),
    fileSha256: sha,
  });
  for (const p of doc.packages) expect(p.version).toBe(pkg.version);
  const secret = doc.packages[1].environmentVariables.find((e: any) => e.name === "STORE_SECRET_ACCESS_KEY");
  expect(secret.isSecret).toBe(true);
});

test("the checker catches what the registry refuses", () => {
  const good = serverJson({ "x.mcpb": sha }) as any;
  const bad = (change: (d: any) => void) => {
    const d = structuredClone(good);
    change(d);
    return serverJsonProblems(d);
  };
  expect(bad((d) => (d.version = "^1.0.0"))).toContain("version: an exact version");
  expect(bad((d) => (d.packages[0].version = "latest"))[0]).toContain("version");
  expect(bad((d) => delete d.packages[0].fileSha256)[0]).toContain("fileSha256");
  expect(bad((d) => (d.description = "x".repeat(101)))).toContain("description: 1-100 characters");
  expect(bad((d) => (d.name = "no-slash"))[0]).toContain("name");
  expect(bad((d) => (d.packages[1].extra = 1))[0]).toContain("not a package field");
});
