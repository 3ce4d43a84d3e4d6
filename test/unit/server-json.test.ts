/** The MCP Registry's server.json that the release build writes: valid under the registry schema's rules, at package.json's version. */
import { expect, test } from "bun:test";
import pkg from "../../package.json" with { type: "json" };
import { serverJson, serverJsonProblems } from "../../scripts/lib/server-json.ts";

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
