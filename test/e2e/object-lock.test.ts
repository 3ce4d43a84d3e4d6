/**
 * set_object_lock through the binary against Ceph RGW, in a bucket created
 * with object lock: retention and legal hold set under --allow-admin really
 * keep a version from being deleted (the store refuses the delete); lifting a
 * GOVERNANCE retention needs bypass_governance, so --allow-delete; COMPLIANCE
 * is asked with its own words and can never be lifted; the bucket's default
 * retention is set and removed. A dry run, a declined form and each gate
 * change nothing at the store.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectLegalHoldCommand,
  GetObjectRetentionCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient, uniqueBucket } from "../helpers/s3.ts";

const DAY = 86_400_000;
let bucket: string;
let admin: Awaited<ReturnType<typeof connectBinary>>;

/** A new object's version id in the locked bucket. */
async function put(key: string): Promise<string> {
  const out = await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
  return out.VersionId!;
}
const retention = (key: string) =>
  sdkClient()
    .send(new GetObjectRetentionCommand({ Bucket: bucket, Key: key }))
    .then(
      (o) => ({ mode: o.Retention?.Mode, until: o.Retention?.RetainUntilDate?.getTime() }),
      () => null,
    );
const legalHold = (key: string) =>
  sdkClient()
    .send(new GetObjectLegalHoldCommand({ Bucket: bucket, Key: key }))
    .then(
      (o) => o.LegalHold?.Status ?? null,
      () => null,
    );
/** Whether the store deletes that version for good (it refuses under retention or a legal hold). */
const deletes = (key: string, versionId: string) =>
  sdkClient()
    .send(new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }))
    .then(
      () => true,
      () => false,
    );

beforeAll(async () => {
  bucket = uniqueBucket("lock");
  await sdkClient().send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true }));
  admin = await connectBinary({ env: s3Env(), args: ["--allow-admin"] });
}, 60_000);
afterAll(() => admin?.close());

test("GOVERNANCE retention: a dry run first, then set; the store refuses the delete; lifting it needs bypass_governance and --allow-delete", async () => {
  const version = await put("gov.txt");
  const until = new Date(Date.now() + 2 * DAY).toISOString();
  const args = { bucket_name: bucket, object_key: "gov.txt", mode: "GOVERNANCE", retain_until: until };
  const dry = await call(admin.client, "set_object_lock", args);
  expect(dry.structuredContent).toMatchObject({ applied: false, after: { retention: { mode: "GOVERNANCE" } } });
  expect(await retention("gov.txt")).toBeNull();

  const set = await call(admin.client, "set_object_lock", { ...args, confirm: true });
  expect(set.isError, textOf(set)).toBeFalsy();
  expect(set.structuredContent).toMatchObject({ applied: true });
  expect(await retention("gov.txt")).toEqual({ mode: "GOVERNANCE", until: Date.parse(until) });
  expect(await deletes("gov.txt", version)).toBe(false);

  // Shortening it: refused without bypass_governance, and bypass needs --allow-delete.
  const sooner = new Date(Date.now() + DAY).toISOString();
  const shorten = await call(admin.client, "set_object_lock", { ...args, retain_until: sooner, confirm: true });
  expect(shorten.isError).toBe(true);
  expect(textOf(shorten)).toContain("BypassNeeded");
  const noDelete = await call(admin.client, "set_object_lock", {
    ...args,
    mode: "NONE",
    retain_until: undefined,
    bypass_governance: true,
    confirm: true,
  });
  expect(noDelete.isError).toBe(true);
  expect(textOf(noDelete)).toContain("DeleteNotAllowed");
  expect(await retention("gov.txt")).toEqual({ mode: "GOVERNANCE", until: Date.parse(until) });

  const both = await connectBinary({ env: s3Env(), args: ["--allow-admin", "--allow-delete"] });
  try {
    // Ceph 16 removes no retention (MalformedXML): the error says to shorten it instead, which it takes.
    const removed = await call(both.client, "set_object_lock", {
      bucket_name: bucket,
      object_key: "gov.txt",
      mode: "NONE",
      bypass_governance: true,
      confirm: true,
    });
    expect(removed.isError).toBe(true);
    expect(textOf(removed)).toContain("shorten it instead");
    const soon = new Date(Date.now() + 2_000).toISOString();
    const lifted = await call(both.client, "set_object_lock", {
      ...args,
      retain_until: soon,
      bypass_governance: true,
      confirm: true,
    });
    expect(lifted.isError, textOf(lifted)).toBeFalsy();
    expect(lifted.structuredContent).toMatchObject({ applied: true, after: { retention: { retain_until: soon } } });
  } finally {
    await both.close();
  }
  await Bun.sleep(2_500);
  expect(await deletes("gov.txt", version)).toBe(true);
}, 60_000);

test("legal hold on keeps a version from deletion; off lets it go", async () => {
  const version = await put("held.txt");
  const on = await call(admin.client, "set_object_lock", {
    bucket_name: bucket,
    object_key: "held.txt",
    legal_hold: "ON",
    confirm: true,
  });
  expect(on.isError, textOf(on)).toBeFalsy();
  expect(await legalHold("held.txt")).toBe("ON");
  expect(await deletes("held.txt", version)).toBe(false);
  // Already on: nobody is asked and nothing is written.
  const again = await call(admin.client, "set_object_lock", {
    bucket_name: bucket,
    object_key: "held.txt",
    legal_hold: "ON",
    confirm: true,
  });
  expect(textOf(again)).toContain("Already so");
  // Lifting a hold removes deletion protection, as lifting a GOVERNANCE retention does: it needs --allow-delete.
  const off = { bucket_name: bucket, object_key: "held.txt", legal_hold: "OFF", confirm: true };
  const refused = await call(admin.client, "set_object_lock", off);
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toContain("DeleteNotAllowed");
  expect(textOf(refused)).toContain('legal_hold: "OFF"');
  expect(await legalHold("held.txt")).toBe("ON");
  const both = await connectBinary({ env: s3Env(), args: ["--allow-admin", "--allow-delete"] });
  try {
    const lifted = await call(both.client, "set_object_lock", off);
    expect(lifted.isError, textOf(lifted)).toBeFalsy();
  } finally {
    await both.close();
  }
  expect(await legalHold("held.txt")).toBe("OFF");
  expect(await deletes("held.txt", version)).toBe(true);
}, 60_000);

test("COMPLIANCE is asked in its own words: declined changes nothing; accepted, it can never be shortened", async () => {
  const version = await put("comp.txt");
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["--allow-admin", "--allow-delete"],
    env: { PATH: process.env.PATH ?? "/usr/bin", HOME: process.env.HOME ?? "/root", ...s3Env() },
    stderr: "ignore",
  });
  const client = new Client({ name: "eliciting", version: "1" }, { capabilities: { elicitation: {} } });
  const asked: { message: string; form: string }[] = [];
  let answer: "decline" | "accept" = "decline";
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push({
      message: req.params.message,
      form: JSON.stringify("requestedSchema" in req.params ? req.params.requestedSchema : null),
    });
    return answer === "accept" ? { action: "accept", content: { confirm: true } } : { action: "decline" };
  });
  await client.connect(transport);
  try {
    const until = new Date(Date.now() + DAY).toISOString();
    const args = {
      bucket_name: bucket,
      object_key: "comp.txt",
      mode: "COMPLIANCE",
      retain_until: until,
      confirm: true,
    };
    const declined = await call(client, "set_object_lock", args);
    expect(declined.structuredContent).toMatchObject({ applied: false, confirmation: "declined" });
    expect(asked[0]!.message).toContain("nobody, not even the account's administrators");
    expect(asked[0]!.form).toContain("cannot be undone");
    expect(await retention("comp.txt")).toBeNull();

    answer = "accept";
    const accepted = await call(client, "set_object_lock", args);
    expect(accepted.structuredContent).toMatchObject({ applied: true, confirmation: "accepted" });
    expect(await retention("comp.txt")).toEqual({ mode: "COMPLIANCE", until: Date.parse(until) });
    expect(await deletes("comp.txt", version)).toBe(false);
    const lift = await call(client, "set_object_lock", {
      bucket_name: bucket,
      object_key: "comp.txt",
      mode: "NONE",
      bypass_governance: true,
      confirm: true,
    });
    expect(lift.isError).toBe(true);
    expect(textOf(lift)).toContain("ComplianceRetention");
    expect(asked).toHaveLength(2);
    expect(await retention("comp.txt")).toEqual({ mode: "COMPLIANCE", until: Date.parse(until) });
  } finally {
    await client.close();
  }
}, 60_000);

test("the bucket's default retention: set, read back, removed; a bucket without object lock says so", async () => {
  const set = await call(admin.client, "set_object_lock", {
    bucket_name: bucket,
    mode: "GOVERNANCE",
    days: 3,
    confirm: true,
  });
  expect(set.isError, textOf(set)).toBeFalsy();
  const settings = async () =>
    (await call(admin.client, "get_bucket_settings", { bucket_name: bucket })).structuredContent!.settings.object_lock;
  expect((await settings()).value).toMatchObject({ default_retention: { mode: "GOVERNANCE", days: 3 } });
  await call(admin.client, "set_object_lock", { bucket_name: bucket, mode: "NONE", confirm: true });
  expect((await settings()).value).toMatchObject({ enabled: true, default_retention: null });

  const plain = await freshBucket("nolock");
  const refused = await call(admin.client, "set_object_lock", {
    bucket_name: plain,
    mode: "GOVERNANCE",
    days: 3,
    confirm: true,
  });
  expect(textOf(refused)).toContain("ObjectLockNotEnabled");
}, 60_000);

test("without --allow-admin the tool is not offered and a call is refused; nothing changes", async () => {
  await put("gate.txt");
  const plain = await connectBinary({ env: s3Env() });
  try {
    const { tools } = await plain.client.listTools();
    expect(tools.map((t) => t.name)).not.toContain("set_object_lock");
    const r = await call(plain.client, "set_object_lock", {
      bucket_name: bucket,
      object_key: "gate.txt",
      legal_hold: "ON",
      confirm: true,
    });
    expect(r.isError).toBe(true);
  } finally {
    await plain.close();
  }
  expect(await legalHold("gate.txt")).toBeNull();
});
