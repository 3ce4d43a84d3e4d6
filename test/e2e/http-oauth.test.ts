/**
 * Remote mode as an OAuth 2.1 resource server, against a real authorization
 * server (oidc-provider on loopback, client credentials with resource
 * indicators): tokens are checked for signature, issuer, audience and
 * expiry; scopes decide the tools a caller sees and may call.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { connectHttp, type HttpBinary, rpc, startHttpBinary } from "../helpers/http.ts";
import { call, textOf } from "../helpers/mcp.ts";
import { startIssuer, type TestIssuer } from "../helpers/oidc.ts";
import { runBinary } from "../helpers/raw-stdio.ts";
import { freshBucket, s3Env } from "../helpers/s3.ts";

let issuer: TestIssuer;
let server: HttpBinary;
let resource: string;
let bucket: string;

beforeAll(async () => {
  issuer = await startIssuer();
  bucket = await freshBucket("oauth");
  server = await startHttpBinary({ env: { ...s3Env(), STORE_OAUTH_ISSUER: issuer.issuer }, args: ["--allow-delete"] });
  resource = `http://localhost:${server.port}/mcp`;
}, 60_000);
afterAll(async () => {
  await server.stop();
  await issuer.stop();
});

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

test("no token: 401 pointing at the protected resource metadata, which names the issuer and the scopes", async () => {
  const res = await rpc(server.url, initialize);
  expect(res.status).toBe(401);
  const challenge = res.headers.get("www-authenticate")!;
  const metadataUrl = challenge.match(/resource_metadata="([^"]+)"/)![1]!;
  expect(metadataUrl).toBe(`http://localhost:${server.port}/.well-known/oauth-protected-resource/mcp`);
  const metadata = await (await fetch(metadataUrl.replace("localhost", "127.0.0.1"))).json();
  expect(metadata).toMatchObject({
    resource,
    authorization_servers: [issuer.issuer],
    scopes_supported: ["s3:read", "s3:write", "s3:delete"],
  });
});

test("a token from the issuer for this resource works against the store; the caller is logged by its sub", async () => {
  const client = await connectHttp(server.url, await issuer.token(resource, "s3:read s3:write"));
  try {
    const put = await call(client, "put_object", {
      bucket_name: bucket,
      object_key: "via-oauth.txt",
      content: "written with a JWT",
    });
    expect(put.isError, textOf(put)).toBeFalsy();
    expect(textOf(await call(client, "get_object", { bucket_name: bucket, object_key: "via-oauth.txt" }))).toContain(
      "written with a JWT",
    );
    expect(server.stderr()).toMatch(new RegExp(`caller="(sub|client_id):${issuer.clientId}"`));
  } finally {
    await client.close();
  }
});

test("wrong audience, wrong issuer, expired, bad signature, not a JWT: each 401 invalid_token", async () => {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const forged = await new SignJWT({ scope: "s3:read", sub: "mallory" })
    .setProtectedHeader({ alg: "RS256", kid: "test-key" })
    .setIssuer(issuer.issuer)
    .setAudience(resource)
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(privateKey);
  const now = Math.floor(Date.now() / 1000);
  const cases: Record<string, string> = {
    "wrong audience": await issuer.token("http://other.example.com/mcp", "s3:read"),
    "wrong issuer": await issuer.mint(
      { scope: "s3:read", sub: "x" },
      { issuer: "http://evil.example.com", audience: resource },
    ),
    expired: await issuer.mint({ scope: "s3:read", sub: "x" }, { audience: resource, expiresIn: now - 120 }),
    "bad signature": forged,
    "not a JWT": "definitely.not.ajwt",
  };
  for (const [what, token] of Object.entries(cases)) {
    const res = await rpc(server.url, initialize, bearer(token));
    expect(res.status, what).toBe(401);
    // A well-formed challenge: every value a quoted string without inner quotes.
    expect(res.headers.get("www-authenticate"), what).toMatch(
      /^Bearer resource_metadata="[^"]+", error="invalid_token", error_description="[^"]+"$/,
    );
  }
  // Within the clock skew (30 s), a just-expired token still passes.
  const justExpired = await issuer.mint({ scope: "s3:read", sub: "x" }, { audience: resource, expiresIn: now - 5 });
  expect((await rpc(server.url, initialize, bearer(justExpired))).status).toBe(200);
});

test("scopes decide the tools: read-only hides writes and deletes; a write call anyway is 403 insufficient_scope", async () => {
  const readToken = await issuer.token(resource, "s3:read");
  const client = await connectHttp(server.url, readToken);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("list_objects");
    expect(names).toContain("presign_url");
    for (const hidden of ["put_object", "copy_object", "create_bucket", "delete_object", "delete_bucket"])
      expect(names).not.toContain(hidden);
    const get = await call(client, "presign_url", { bucket_name: bucket, object_key: "via-oauth.txt" });
    expect(get.isError, textOf(get)).toBeFalsy();
  } finally {
    await client.close();
  }
  for (const [name, args, scope] of [
    ["put_object", { bucket_name: bucket, object_key: "nope.txt", content: "x" }, "s3:write"],
    ["presign_url", { bucket_name: bucket, object_key: "nope.txt", method: "PUT" }, "s3:write"],
    ["delete_object", { bucket_name: bucket, object_key: "via-oauth.txt" }, "s3:delete"],
  ] as const) {
    const res = await rpc(
      server.url,
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } },
      bearer(readToken),
    );
    expect(res.status, name).toBe(403);
    expect(res.headers.get("www-authenticate")).toContain(`error="insufficient_scope", scope="${scope}"`);
  }
  const deleteToken = await issuer.token(resource, "s3:read s3:delete");
  const deleter = await connectHttp(server.url, deleteToken);
  try {
    expect((await deleter.listTools()).tools.map((t) => t.name)).toContain("delete_object");
    const del = await call(deleter, "delete_object", { bucket_name: bucket, object_key: "via-oauth.txt" });
    expect(del.isError, textOf(del)).toBeFalsy();
  } finally {
    await deleter.close();
  }
});

test("a token must expire and be an access token: no exp, or a typ of another kind of JWT, is 401; JWT, at+jwt or no typ pass", async () => {
  const claims = { scope: "s3:read", sub: "x" };
  const noExp = await issuer.mint(claims, { audience: resource, expiresIn: null });
  const refused = await rpc(server.url, initialize, bearer(noExp));
  expect(refused.status).toBe(401);
  expect(refused.headers.get("www-authenticate")).toContain("no expiry");
  for (const typ of ["logout+jwt", "secevent+jwt", "dpop+jwt"]) {
    const res = await rpc(server.url, initialize, bearer(await issuer.mint(claims, { audience: resource, typ })));
    expect(res.status, typ).toBe(401);
    expect(res.headers.get("www-authenticate"), typ).toContain("not an access token");
  }
  for (const typ of ["at+jwt", "application/at+jwt", "JWT", null]) {
    expect(
      (await rpc(server.url, initialize, bearer(await issuer.mint(claims, { audience: resource, typ })))).status,
      String(typ),
    ).toBe(200);
  }
  // Only an explicit setting accepts tokens that never expire.
  const lax = await startHttpBinary({
    env: { ...s3Env(), STORE_OAUTH_ISSUER: issuer.issuer, STORE_OAUTH_ALLOW_NO_EXPIRY: "true" },
  });
  try {
    expect(
      (
        await rpc(
          lax.url,
          initialize,
          bearer(await issuer.mint(claims, { audience: `http://localhost:${lax.port}/mcp`, expiresIn: null })),
        )
      ).status,
    ).toBe(200);
  } finally {
    await lax.stop();
  }
});

test("while the issuer is down, junk tokens are not relayed to it: failures are remembered, and a non-JWT never causes a fetch", async () => {
  let fetches = 0;
  const down = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => (fetches++, new Response("unavailable", { status: 503 })),
  });
  const dead = await startHttpBinary({ env: { ...s3Env(), STORE_OAUTH_ISSUER: `http://127.0.0.1:${down.port}` } });
  try {
    for (let i = 0; i < 30; i++) expect((await rpc(dead.url, initialize, bearer(`not-a-jwt-${i}`))).status).toBe(401);
    expect(fetches).toBe(0);
    const { privateKey } = await generateKeyPair("RS256");
    const junk = await new SignJWT({ sub: "m" })
      .setProtectedHeader({ alg: "RS256", kid: "k" })
      .setIssuer(`http://127.0.0.1:${down.port}`)
      .setAudience(`http://localhost:${dead.port}/mcp`)
      .setExpirationTime("5m")
      .sign(privateKey);
    const answers = await Promise.all(Array.from({ length: 30 }, () => rpc(dead.url, initialize, bearer(junk))));
    for (const res of answers) {
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("retry later");
    }
    // One discovery (its two well-known addresses), then nothing until the backoff ends.
    expect(fetches).toBeLessThanOrEqual(2);
  } finally {
    await dead.stop();
    down.stop(true);
  }
});

test("junk tokens about the token itself (alg none, HS256, an embedded jwk, a jku) are each their own 401 and never lock out a valid token", async () => {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const claims = {
    sub: "mallory",
    scope: "s3:read",
    iss: issuer.issuer,
    aud: resource,
    exp: Math.floor(Date.now() / 1000) + 300,
  };
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const junk: Record<string, string> = {
    "alg none": `${enc({ alg: "none", typ: "JWT" })}.${enc(claims)}.`,
    HS256: await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", kid: "test-key" })
      .sign(new TextEncoder().encode("a-shared-secret-of-32-bytes-long!")),
    "embedded jwk": await new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", jwk: await exportJWK(publicKey) })
      .sign(privateKey),
    jku: await new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "test-key", jku: "http://127.0.0.1:1/jwks.json" })
      .sign(privateKey),
    "unknown alg": `${enc({ alg: "XX999", kid: "test-key" })}.${enc(claims)}.${enc({ s: 1 })}`,
  };
  const valid = await issuer.mint({ scope: "s3:read", sub: "carol" }, { audience: resource });
  for (let round = 0; round < 3; round++) {
    for (const [what, token] of Object.entries(junk)) {
      const res = await rpc(server.url, initialize, bearer(token));
      expect(res.status, what).toBe(401);
      expect(res.headers.get("www-authenticate"), what).not.toContain("retry later");
      expect((await rpc(server.url, initialize, bearer(valid))).status, `valid after ${what}`).toBe(200);
    }
  }
  const none = await rpc(server.url, initialize, bearer(junk["alg none"]!));
  expect(none.headers.get("www-authenticate")).toContain("signing algorithm (alg) none is not one this server accepts");
});

test("STORE_OAUTH_ALGORITHMS narrows the accepted algorithms; an unknown name stops the start", async () => {
  const narrow = await startHttpBinary({
    env: { ...s3Env(), STORE_OAUTH_ISSUER: issuer.issuer, STORE_OAUTH_ALGORITHMS: "ES256" },
  });
  try {
    const res = await rpc(
      narrow.url,
      initialize,
      bearer(await issuer.mint({ scope: "s3:read", sub: "x" }, { audience: `http://localhost:${narrow.port}/mcp` })),
    );
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("(alg) RS256 is not one this server accepts");
  } finally {
    await narrow.stop();
  }
  const bad = runBinary(["--transport", "http"], {
    ...s3Env(),
    STORE_OAUTH_ISSUER: issuer.issuer,
    STORE_OAUTH_ALGORITHMS: "RS256,HS256",
  });
  expect(bad.exitCode).toBe(1);
  expect(bad.stderr).toContain("HS256");
});
