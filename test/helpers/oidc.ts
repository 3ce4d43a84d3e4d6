/**
 * A real OAuth 2 / OIDC authorization server for tests: oidc-provider on
 * loopback, with the client credentials grant and resource indicators, so
 * it issues JWT access tokens for this server's resource URL with the
 * scopes asked for. Its signing key is generated here, so tests can also
 * mint tokens the provider would never issue (expired, another issuer).
 */

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, importPKCS8, type JWK, SignJWT } from "jose";
import Provider from "oidc-provider";
import { freePort } from "../../scripts/s3/local-servers.ts";

export interface TestIssuer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The SHA-1 thumbprint of the signing key's certificate (what an STS like Ceph RGW's is told to trust). */
  thumbprint: string;
  /** A token from the provider's token endpoint (client credentials) for `resource` with `scope`. */
  token(resource: string, scope: string): Promise<string>;
  /** A JWT signed with the provider's own key, with whatever claims a test needs. */
  mint(
    claims: Record<string, unknown>,
    options?: { expiresIn?: string | number | null; issuer?: string; audience?: string; typ?: string | null },
  ): Promise<string>;
  stop(): Promise<void>;
}

export async function startIssuer(): Promise<TestIssuer> {
  const port = freePort();
  const issuer = `http://127.0.0.1:${port}`;
  // The signing key comes with a self-signed certificate in the JWKS (x5c): Ceph RGW's STS verifies tokens
  // against that certificate and checks its SHA-1 thumbprint against the one registered for the provider.
  const dir = mkdtempSync(join(tmpdir(), "test-issuer-"));
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "2",
      "-subj",
      "/CN=store-mcp-test-issuer",
    ],
    { stdio: "ignore" },
  );
  const der = Buffer.from(readFileSync(join(dir, "cert.pem"), "utf8").replace(/-----[^-]+-----|\s/g, ""), "base64");
  const privateKey = await importPKCS8(readFileSync(join(dir, "key.pem"), "utf8"), "RS256", { extractable: true });
  rmSync(dir, { recursive: true, force: true });
  const jwk: JWK = {
    ...(await exportJWK(privateKey)),
    kid: "test-key",
    alg: "RS256",
    use: "sig",
    x5c: [der.toString("base64")],
  };
  const clientId = "mcp-test-client";
  const clientSecret = "a-client-secret-for-tests-only-0123456789";
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        scope: "s3:read s3:write s3:delete",
      },
    ],
    jwks: { keys: [jwk] },
    scopes: ["s3:read", "s3:write", "s3:delete"],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => undefined,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, resource: string) => ({
          scope: "s3:read s3:write s3:delete",
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        }),
      },
    },
  });
  const http: Server = createServer(provider.callback());
  await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
  return {
    issuer,
    thumbprint: createHash("sha1").update(der).digest("hex"),
    clientId,
    clientSecret,
    async token(resource, scope) {
      const res = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${btoa(`${clientId}:${clientSecret}`)}`,
        },
        body: new URLSearchParams({ grant_type: "client_credentials", scope, resource }),
      });
      const body = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!body.access_token) throw new Error(`token endpoint: ${res.status} ${body.error}: ${body.error_description}`);
      return body.access_token;
    },
    async mint(claims, options = {}) {
      // null: no typ / no exp at all (tokens some issuers send, which the server must judge).
      const typ = options.typ === undefined ? "at+jwt" : options.typ;
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: "RS256", kid: "test-key", ...(typ === null ? {} : { typ }) })
        .setIssuer(options.issuer ?? issuer)
        .setAudience(options.audience ?? "")
        .setIssuedAt();
      if (options.expiresIn !== null) jwt.setExpirationTime(options.expiresIn ?? "5m");
      return jwt.sign(privateKey);
    },
    stop: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}
