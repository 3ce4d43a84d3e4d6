/**
 * Identity pass-through (--sts-role-arn) against a real STS: Ceph RGW's
 * AssumeRoleWithWebIdentity, trusting the test issuer (oidc-provider's key,
 * with its certificate's thumbprint registered as an OpenID Connect provider
 * in RGW). Each caller's calls run with the credentials RGW's STS gives them
 * for the role: the role's policy decides (a bucket the server's own key can
 * read is refused), and a person the role does not trust gets StsDenied,
 * never the server's key instead. A Ceph of its own: with STS on, RGW answers
 * a wrong secret differently, which other tests check.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type S3Server, startCephRgw } from "../../scripts/s3/local-servers.ts";
import { connectHttp, type HttpBinary, startHttpBinary } from "../helpers/http.ts";
import { call, textOf } from "../helpers/mcp.ts";
import { startIssuer, type TestIssuer } from "../helpers/oidc.ts";
import { rgwIam } from "../helpers/rgw-iam.ts";
import { uniqueBucket } from "../helpers/s3.ts";

let store: S3Server;
let issuer: TestIssuer;
let server: HttpBinary;
let resource: string;
let team: string;
let closed: string;
const role = `mcp-people-${Date.now().toString(36)}`;

const storeEnv = () => ({
  STORE_ENDPOINT_URL: store.endpoint,
  STORE_ACCESS_KEY_ID: store.accessKeyId,
  STORE_SECRET_ACCESS_KEY: store.secretAccessKey,
  STORE_REGION: store.region,
});
const admin = () =>
  new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
  });

beforeAll(async () => {
  store = await startCephRgw(4, { sts: true });
  issuer = await startIssuer();
  const idp = new URL(issuer.issuer).host;
  // The role trusts the issuer for alice only; its policy opens the sts-team-* buckets and nothing else.
  team = uniqueBucket("sts-team");
  closed = uniqueBucket("sts-closed");
  for (const bucket of [team, closed]) await admin().send(new CreateBucketCommand({ Bucket: bucket }));
  await admin().send(new PutObjectCommand({ Bucket: team, Key: "plan.txt", Body: "team plan" }));
  await admin().send(new PutObjectCommand({ Bucket: closed, Key: "salaries.csv", Body: "secret" }));
  await rgwIam(store, {
    Action: "CreateOpenIDConnectProvider",
    Url: issuer.issuer,
    "ClientIDList.member.1": issuer.clientId,
    "ThumbprintList.member.1": issuer.thumbprint,
  });
  const trust = {
    Version: "2012-10-17",
    Statement: [
      {
        Effect: "Allow",
        Principal: { Federated: [`arn:aws:iam:::oidc-provider/${idp}`] },
        Action: ["sts:AssumeRoleWithWebIdentity"],
        Condition: { StringEquals: { [`${idp}:sub`]: "alice" } },
      },
    ],
  };
  await rgwIam(store, {
    Action: "CreateRole",
    RoleName: role,
    Path: "/",
    AssumeRolePolicyDocument: JSON.stringify(trust),
  });
  const allow = {
    Version: "2012-10-17",
    Statement: [
      { Effect: "Allow", Action: ["s3:*"], Resource: ["arn:aws:s3:::t-sts-team-*", "arn:aws:s3:::t-sts-team-*/*"] },
    ],
  };
  await rgwIam(store, {
    Action: "PutRolePolicy",
    RoleName: role,
    PolicyName: "team-buckets",
    PolicyDocument: JSON.stringify(allow),
  });
  server = await startHttpBinary({
    env: { ...storeEnv(), STORE_OAUTH_ISSUER: issuer.issuer },
    args: ["--sts-role-arn", `arn:aws:iam:::role/${role}`],
  });
  resource = `http://localhost:${server.port}/mcp`;
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await issuer?.stop();
  await store?.stop();
});

const person = async (sub: string): Promise<Client> =>
  connectHttp(
    server.url,
    await issuer.mint({ sub, client_id: issuer.clientId, scope: "s3:read s3:write" }, { audience: resource }),
  );

test("alice's calls run with her own STS credentials: the role's buckets work, one the server's key can read is refused by the store", async () => {
  expect(team.startsWith("t-sts-team-")).toBe(true);
  const alice = await person("alice");
  try {
    const read = await call(alice, "get_object", { bucket_name: team, object_key: "plan.txt" });
    expect(textOf(read)).toContain("team plan");
    expect(
      (await call(alice, "put_object", { bucket_name: team, object_key: "notes.txt", content: "by alice" })).isError,
    ).toBeFalsy();
    const refused = await call(alice, "get_object", { bucket_name: closed, object_key: "salaries.csv" });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("AccessDenied");
    expect(textOf(refused)).not.toContain("secret");
  } finally {
    await alice.close();
  }
  // The server's own key reads it: the refusal was the role's, not the object's absence.
  expect(
    await (
      await admin().send(
        new (
          await import("@aws-sdk/client-s3")
        ).GetObjectCommand({ Bucket: closed, Key: "salaries.csv" }),
      )
    ).Body!.transformToString(),
  ).toBe("secret");
});

test("a person the role does not trust gets StsDenied, not the server's key", async () => {
  const bob = await person("bob");
  try {
    const r = await call(bob, "get_object", { bucket_name: team, object_key: "plan.txt" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("StsDenied");
    expect(textOf(r)).not.toContain("team plan");
  } finally {
    await bob.close();
  }
});

test("configuration: pass-through needs remote mode with OAuth and a role ARN", async () => {
  const { runBinary } = await import("../helpers/raw-stdio.ts");
  const stdio = runBinary(["--sts-role-arn", `arn:aws:iam:::role/${role}`], storeEnv());
  expect(stdio.exitCode).toBe(1);
  expect(stdio.stderr).toContain("needs remote mode with --oauth-issuer");
  const bad = runBinary(["--transport", "http", "--sts-role-arn", "not-an-arn"], {
    ...storeEnv(),
    STORE_OAUTH_ISSUER: issuer.issuer,
  });
  expect(bad.stderr).toContain('"not-an-arn" is not a role ARN');
});
