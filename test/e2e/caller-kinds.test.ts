/**
 * One identity space per kind of caller (hardening, fifth round), through the
 * compiled binary in remote mode with static tokens and a real OAuth issuer:
 * a static token labelled `ci` and a JWT whose only name is `client_id: "ci"`
 * are two callers, so the JWT sees none of the bot's jobs or tasks; a JWT
 * that names nobody (no sub, no client_id) is refused instead of becoming a
 * shared caller; the audit line names each by its kind.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { tempDir } from "../helpers/files.ts";
import { connectHttp, type HttpBinary, rpc, startHttpBinary } from "../helpers/http.ts";
import { call, textOf } from "../helpers/mcp.ts";
import { startIssuer, type TestIssuer } from "../helpers/oidc.ts";
import { freshBucket, s3Env } from "../helpers/s3.ts";

const BOT_TOKEN = "ci-bot-static-token-0123456789abcdef";
const SLOW_SQL = "SELECT count(*) FROM objects, range(100000000000) t(i)";
let issuer: TestIssuer;
let server: HttpBinary;
let bucket: string;
let audit: string;

beforeAll(async () => {
  issuer = await startIssuer();
  bucket = await freshBucket("kinds");
  const { sdkClient } = await import("../helpers/s3.ts");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "tiny.csv", Body: "a,b\n1,x\n" }));
  audit = join(tempDir("kinds-audit"), "audit.log");
  server = await startHttpBinary({
    env: {
      ...s3Env(),
      STORE_HTTP_TOKENS: `ci:${BOT_TOKEN}`,
      STORE_OAUTH_ISSUER: issuer.issuer,
      STORE_CALL_BUDGET_SECONDS: "1",
      STORE_AUDIT_LOG: audit,
    },
  });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await issuer?.stop();
});

const resource = () => `http://localhost:${server.port}/mcp`;

test("a static token's label and a JWT's client_id of the same name are two callers: the JWT sees none of the bot's jobs", async () => {
  const bot = await connectHttp(server.url, BOT_TOKEN);
  const jwt = await issuer.mint({ client_id: "ci", scope: "s3:read s3:write" }, { audience: resource() });
  const other = await connectHttp(server.url, jwt);
  try {
    const handed = await call(bot, "query_objects", { bucket_name: bucket, keys: ["tiny.csv"], sql: SLOW_SQL });
    const job = handed.structuredContent?.job as { id: string; state: string } | undefined;
    expect(job?.state, textOf(handed)).toBe("running");
    // The bot sees its job; the JWT named "ci" does not, by list or by id.
    const mine = await call(bot, "list_jobs", {});
    expect((mine.structuredContent!.jobs as { id: string }[]).map((j) => j.id)).toContain(job!.id);
    const theirs = await call(other, "list_jobs", {});
    expect(theirs.isError, textOf(theirs)).toBeFalsy();
    expect(theirs.structuredContent!.jobs).toEqual([]);
    const status = await call(other, "job_status", { job_id: job!.id, wait_seconds: 0 });
    expect(status.isError).toBe(true);
    expect(textOf(status)).toContain("NoSuchJob");
    const cancel = await call(other, "cancel_job", { job_id: job!.id });
    expect(cancel.isError).toBe(true);
    // Still the bot's, still running: then the bot stops it.
    const stopped = await call(bot, "cancel_job", { job_id: job!.id });
    expect((stopped.structuredContent!.job as { state: string }).state).toBe("cancelled");
  } finally {
    await bot.close();
    await other.close();
  }
  const lines = readFileSync(audit, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { caller: string; action: string });
  expect(lines.filter((l) => l.action === "list_jobs").map((l) => l.caller)).toEqual(["label:ci", "client_id:ci"]);
}, 90_000);

test("a JWT that names no subject and no client is refused (401), not made a shared caller", async () => {
  const nobody = await issuer.mint({ scope: "s3:read" }, { audience: resource() });
  const res = await rpc(
    server.url,
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    },
    { authorization: `Bearer ${nobody}` },
  );
  expect(res.status).toBe(401);
  expect(res.headers.get("www-authenticate")).toContain("invalid_token");
  expect(res.headers.get("www-authenticate")).toContain("names no subject");
  // A JWT with a sub is a caller of its own kind.
  const alice = await connectHttp(
    server.url,
    await issuer.mint({ sub: "ci", scope: "s3:read" }, { audience: resource() }),
  );
  try {
    expect((await call(alice, "list_jobs", {})).structuredContent!.jobs).toEqual([]);
  } finally {
    await alice.close();
  }
}, 60_000);
