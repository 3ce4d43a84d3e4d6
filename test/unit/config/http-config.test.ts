/** The pure parts of remote mode: its configuration, static token matching, JWT scopes, and the scope policy. */
import { expect, test } from "bun:test";
import { missingScope, scopeFor, toolsFor } from "../../../src/access/policy.ts";
import { createAuthenticator } from "../../../src/auth/index.ts";
import { scopesOf } from "../../../src/auth/jwt.ts";
import { matchStaticToken } from "../../../src/auth/static-tokens.ts";
import { isLoopbackHostHeader, resolveHttpConfig } from "../../../src/config/http-config.ts";
import { ALL_TOOLS } from "../../../src/tool-registry/index.ts";

const resolve = (cli: Parameters<typeof resolveHttpConfig>[0], env: Record<string, string> = {}) => {
  const errors: string[] = [];
  return { config: resolveHttpConfig(cli, env, errors), errors };
};

test("listen addresses: defaults, IPv6, bad values; non-loopback needs authentication", () => {
  expect(resolve({}).config).toMatchObject({ host: "127.0.0.1", port: 8787, resourceUrl: "http://localhost:8787/mcp" });
  expect(resolve({ listen: "[::1]:9000" }).config).toMatchObject({ host: "::1", port: 9000 });
  expect(resolve({ listen: "nope" }).errors[0]).toContain("HOST:PORT");
  expect(resolve({ listen: "127.0.0.1:70000" }).errors[0]).toContain("HOST:PORT");
  expect(resolve({ listen: "0.0.0.0:8787" }).errors[0]).toContain("STORE_HTTP_TOKENS");
  expect(resolve({ listen: "0.0.0.0:8787" }, { STORE_HTTP_TOKENS: "ci:0123456789abcdef0123" }).errors).toEqual([]);
  expect(resolve({ listen: "0.0.0.0:8787", oauthIssuer: "https://id.example.com" }).errors).toEqual([]);
});

test("tokens: labels, short tokens refused; OAuth: audience defaults to the resource URL, scope names configurable", () => {
  const { config, errors } = resolve(
    {},
    { STORE_HTTP_TOKENS: "alice:0123456789abcdef0123, fedcba9876543210fedc ,bob:short" },
  );
  expect(config.tokens.map((t) => t.label)).toEqual(["alice", "token-2", "bob"]);
  expect(errors.join()).toContain('"bob" is shorter than 16');
  const oauth = resolve(
    { oauthIssuer: "https://id.example.com/realms/x", resourceUrl: "https://mcp.example.com/mcp" },
    { STORE_OAUTH_SCOPE_WRITE: "storage.write" },
  ).config.oauth!;
  expect(oauth).toMatchObject({
    issuer: "https://id.example.com/realms/x",
    audience: "https://mcp.example.com/mcp",
    scopeNames: { read: "s3:read", write: "storage.write", delete: "s3:delete" },
  });
  expect(resolve({ oauthAudience: "x" }).errors[0]).toContain("without an issuer");
});

test("Host allowlist: loopback names on any port, the listen address and the public URL's host", () => {
  const { config } = resolve(
    { listen: "0.0.0.0:8787", resourceUrl: "https://mcp.example.com/mcp", allowedHosts: ["internal.svc:8787"] },
    { STORE_HTTP_TOKENS: "a:0123456789abcdef0123" },
  );
  expect(config.allowedHosts).toEqual(["0.0.0.0:8787", "mcp.example.com", "internal.svc:8787"]);
  for (const h of ["localhost", "localhost:1", "127.0.0.1:8787", "[::1]:5"]) expect(isLoopbackHostHeader(h)).toBe(true);
  for (const h of ["evil.example.com", "localhost.evil.com", "127.0.0.1.nip.io:80"])
    expect(isLoopbackHostHeader(h)).toBe(false);
});

test("static tokens match exactly, whatever their length; the Authorization header must be Bearer", async () => {
  const tokens = [
    { label: "a", token: "0123456789abcdef0123" },
    { label: "b", token: "zyxwvutsrqponmlkjihg" },
  ];
  expect(matchStaticToken(tokens, "zyxwvutsrqponmlkjihg")).toBe("b");
  expect(matchStaticToken(tokens, "0123456789abcdef012")).toBeUndefined();
  expect(matchStaticToken(tokens, "0123456789abcdef01234")).toBeUndefined();
  const auth = createAuthenticator(resolve({}, { STORE_HTTP_TOKENS: "a:0123456789abcdef0123" }).config);
  expect(await auth.authenticate("Bearer 0123456789abcdef0123")).toMatchObject({
    ok: true,
    caller: { id: "label:a", label: "a" },
  });
  expect(await auth.authenticate(null)).toMatchObject({ ok: false });
  expect(await auth.authenticate("Basic abc")).toMatchObject({ ok: false, error: "invalid_request" });
  const open = createAuthenticator(resolve({}).config);
  expect(open.required).toBe(false);
});

test("JWT scopes from `scope` or `scp`, mapped through the configured names", () => {
  const names = { read: "s3:read", write: "s3:write", delete: "s3:delete" } as const;
  expect([...scopesOf({ scope: "openid s3:read s3:delete" }, names)]).toEqual(["read", "delete"]);
  expect([...scopesOf({ scp: ["s3:write"] }, names)]).toEqual(["write"]);
  expect([...scopesOf({}, names)]).toEqual([]);
});

test("scope policy: what each tool needs, what a caller sees, local files on a remote server", () => {
  const tool = (n: string) => ALL_TOOLS.find((t) => t.name === n)!;
  expect(scopeFor(tool("list_objects"))).toBe("read");
  expect(scopeFor(tool("presign_url"), { method: "PUT" })).toBe("write");
  expect(scopeFor(tool("presign_url"), { method: "GET" })).toBe("read");
  expect(scopeFor(tool("create_bucket"))).toBe("write");
  expect(scopeFor(tool("delete_bucket"))).toBe("delete");
  expect(scopeFor(tool("delete_objects"))).toBe("delete");
  const read = new Set(["read"] as const);
  expect(missingScope(ALL_TOOLS, "put_object", {}, read)).toBe("write");
  expect(missingScope(ALL_TOOLS, "list_buckets", {}, read)).toBeUndefined();
  expect(missingScope(ALL_TOOLS, "no_such_tool", {}, read)).toBeUndefined();
  const offered = toolsFor(ALL_TOOLS, {
    readOnly: false,
    allowDelete: true,
    tools: [],
    scopes: new Set(["read", "write"]),
    localFiles: false,
  });
  const names = offered.map((t) => t.name);
  expect(names).not.toContain("upload_file");
  expect(names).not.toContain("delete_object");
  expect(names).toContain("put_object");
  expect(offered.find((t) => t.name === "presign_url")!.description).toContain("how the user moves whole objects");
});
