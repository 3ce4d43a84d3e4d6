/**
 * Bucket settings and object tags through the compiled binary against Ceph
 * RGW: each read with and without the setting, each change (a dry run first)
 * and its effect read back with the SDK, the public-policy refusal, the
 * lifecycle `replace` rule, a store that answers NotImplemented for a part
 * (the fake S3 server), and the gating (--allow-admin, read-only, --tools).
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  CreateBucketCommand,
  GetBucketCorsCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketPolicyCommand,
  GetBucketVersioningCommand,
  GetObjectTaggingCommand,
  PutBucketEncryptionCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketOwnershipControlsCommand,
  PutBucketTaggingCommand,
  PutObjectCommand,
  PutPublicAccessBlockCommand,
} from "@aws-sdk/client-s3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { fakeEnv, startFakeS3, xml } from "../helpers/fake-s3.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { freshBucket, s3Env, sdkClient, uniqueBucket } from "../helpers/s3.ts";

let plain: string;
let configured: string;
let admin: Awaited<ReturnType<typeof connectBinary>>;

const publicPolicy = (bucket: string) =>
  JSON.stringify({
    Version: "2012-10-17",
    Statement: [{ Effect: "Allow", Principal: "*", Action: ["s3:GetObject"], Resource: [`arn:aws:s3:::${bucket}/*`] }],
  });

beforeAll(async () => {
  plain = await freshBucket("settings-plain");
  configured = await freshBucket("settings-set");
  await sdkClient().send(
    new PutObjectCommand({ Bucket: configured, Key: "docs/a.txt", Body: "a", Tagging: "team=finance" }),
  );
  admin = await connectBinary({ env: { ...s3Env(), STORE_ALLOW_ADMIN: "true", STORE_ALLOW_DELETE: "true" } });
}, 60_000);
afterAll(() => admin?.close());

test("get_bucket_settings on a bucket with nothing set: each part not set, a summary first", async () => {
  const result = await call(admin.client, "get_bucket_settings", { bucket_name: plain });
  expect(result.isError).toBeFalsy();
  const s = result.structuredContent!;
  expect(s.settings.versioning.state).toBe("not set");
  expect(s.settings.lifecycle.state).toBe("not set");
  expect(s.settings.cors.state).toBe("not set");
  expect(s.settings.policy.state).toBe("not set");
  expect(s.settings.location.state).toBe("set");
  expect(s.summary).toContain("not versioned");
  expect(s.public).toEqual([]);
  expect(textOf(result).split("\n")[0]).toBe(`s3://${plain}: ${s.summary}`);
});

test("each change is a dry run first, then applied with confirm: the store has it, and get_bucket_settings says so", async () => {
  // Versioning.
  const dry = await call(admin.client, "set_bucket_versioning", { bucket_name: configured, status: "Enabled" });
  expect(dry.structuredContent).toMatchObject({ applied: false, before: "never enabled", after: "Enabled" });
  expect(textOf(dry)).toContain("confirm: true");
  expect((await sdkClient().send(new GetBucketVersioningCommand({ Bucket: configured }))).Status).toBeUndefined();
  const on = await call(admin.client, "set_bucket_versioning", {
    bucket_name: configured,
    status: "Enabled",
    confirm: true,
  });
  expect(on.structuredContent).toMatchObject({ applied: true });
  expect(textOf(on)).toContain("never be turned off");
  expect((await sdkClient().send(new GetBucketVersioningCommand({ Bucket: configured }))).Status).toBe("Enabled");

  // Lifecycle: tmp/ expires after 7 days, incomplete uploads aborted after 3.
  const rules = [
    { id: "tmp", prefix: "tmp/", expire_after_days: 7 },
    { id: "uploads", abort_incomplete_uploads_after_days: 3 },
  ];
  await call(admin.client, "set_bucket_lifecycle", { bucket_name: configured, rules });
  expect(
    await sdkClient()
      .send(new GetBucketLifecycleConfigurationCommand({ Bucket: configured }))
      .catch((e) => e.name),
  ).toBe("NoSuchLifecycleConfiguration");
  const life = await call(admin.client, "set_bucket_lifecycle", { bucket_name: configured, rules, confirm: true });
  expect(life.isError, textOf(life)).toBeFalsy();
  const stored = (await sdkClient().send(new GetBucketLifecycleConfigurationCommand({ Bucket: configured }))).Rules!;
  expect(stored.map((r) => r.ID).sort()).toEqual(["tmp", "uploads"]);
  expect(stored.find((r) => r.ID === "tmp")!.Expiration?.Days).toBe(7);

  // CORS.
  const cors = await call(admin.client, "set_bucket_cors", {
    bucket_name: configured,
    rules: [{ allowed_origins: ["https://app.example.com"], allowed_methods: ["GET", "PUT"], max_age_seconds: 600 }],
    confirm: true,
  });
  expect(cors.isError, textOf(cors)).toBeFalsy();
  const corsRules = (await sdkClient().send(new GetBucketCorsCommand({ Bucket: configured }))).CORSRules!;
  expect(corsRules[0]).toMatchObject({
    AllowedOrigins: ["https://app.example.com"],
    AllowedMethods: ["GET", "PUT"],
    MaxAgeSeconds: 600,
  });

  // A public policy is refused without allow_public, applied with it, and the result says what is public.
  const refused = await call(admin.client, "set_bucket_policy", {
    bucket_name: configured,
    policy: publicPolicy(configured),
    confirm: true,
  });
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toContain("PublicPolicyRefused");
  expect(textOf(refused)).toContain("s3:GetObject");
  expect(
    await sdkClient()
      .send(new GetBucketPolicyCommand({ Bucket: configured }))
      .catch((e) => e.name),
  ).toBe("NoSuchBucketPolicy");
  const publicOk = await call(admin.client, "set_bucket_policy", {
    bucket_name: configured,
    policy: publicPolicy(configured),
    allow_public: true,
    confirm: true,
  });
  expect(publicOk.isError, textOf(publicOk)).toBeFalsy();
  expect(publicOk.structuredContent!.note).toContain("PUBLIC");
  expect(
    JSON.parse((await sdkClient().send(new GetBucketPolicyCommand({ Bucket: configured }))).Policy!).Statement[0]
      .Principal,
  ).toBe("*");

  const read = (await call(admin.client, "get_bucket_settings", { bucket_name: configured })).structuredContent!;
  expect(read.settings.versioning).toMatchObject({ state: "set", value: { status: "Enabled" } });
  expect(read.settings.lifecycle.value.map((r: { id: string }) => r.id).sort()).toEqual(["tmp", "uploads"]);
  expect(read.settings.cors.state).toBe("set");
  expect(read.public[0]).toContain("s3:GetObject");
  expect(read.summary).toContain("versioned");
  expect(read.summary).toContain("objects under tmp/ expire after 7 days");
  expect(read.summary).toContain("public read through the bucket policy");

  // delete_bucket_policy: the policy goes.
  const removed = await call(admin.client, "delete_bucket_policy", { bucket_name: configured, confirm: true });
  expect(removed.structuredContent).toMatchObject({ applied: true, after: null });
  expect(
    await sdkClient()
      .send(new GetBucketPolicyCommand({ Bucket: configured }))
      .catch((e) => e.name),
  ).toBe("NoSuchBucketPolicy");
  expect(
    textOf(await call(admin.client, "delete_bucket_policy", { bucket_name: configured, confirm: true })),
  ).toContain("no bucket policy; nothing to remove");
  // Empty lists remove CORS and lifecycle.
  await call(admin.client, "set_bucket_cors", { bucket_name: configured, rules: [], confirm: true });
  expect(
    await sdkClient()
      .send(new GetBucketCorsCommand({ Bucket: configured }))
      .catch((e) => e.name),
  ).toBe("NoSuchCORSConfiguration");
  const cleared = await call(admin.client, "set_bucket_lifecycle", {
    bucket_name: configured,
    rules: [],
    replace: true,
    confirm: true,
  });
  expect(cleared.structuredContent!.after).toEqual([]);
  expect(
    await sdkClient()
      .send(new GetBucketLifecycleConfigurationCommand({ Bucket: configured }))
      .catch((e) => e.name),
  ).toBe("NoSuchLifecycleConfiguration");
});

test("set_bucket_lifecycle keeps the rules it was not given (even ones its form cannot say) unless replace: true", async () => {
  const bucket = await freshBucket("settings-life");
  // A rule set by someone else, with a part the tools' form does not express (a filter of two tags).
  const twoTags = [
    { Key: "a", Value: "1" },
    { Key: "b", Value: "2" },
  ];
  await sdkClient().send(
    new PutBucketLifecycleConfigurationCommand({
      Bucket: bucket,
      LifecycleConfiguration: {
        Rules: [
          {
            ID: "theirs",
            Status: "Enabled",
            Filter: { And: { Prefix: "big/", Tags: twoTags } },
            Expiration: { Days: 30 },
          },
        ],
      },
    }),
  );
  const merged = await call(admin.client, "set_bucket_lifecycle", {
    bucket_name: bucket,
    rules: [{ id: "mine", prefix: "tmp/", expire_after_days: 1 }],
    confirm: true,
  });
  expect(merged.isError, textOf(merged)).toBeFalsy();
  let rules = (await sdkClient().send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).Rules!;
  expect(rules.map((r) => r.ID).sort()).toEqual(["mine", "theirs"]);
  expect(rules.find((r) => r.ID === "theirs")!.Filter?.And?.Tags).toEqual(twoTags);
  const replaced = await call(admin.client, "set_bucket_lifecycle", {
    bucket_name: bucket,
    rules: [{ id: "mine", prefix: "tmp/", expire_after_days: 2 }],
    replace: true,
    confirm: true,
  });
  expect(replaced.structuredContent!.note).toContain("Removed rules: theirs");
  rules = (await sdkClient().send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).Rules!;
  expect(rules.map((r) => [r.ID, r.Expiration?.Days])).toEqual([["mine", 2]]);
  const invalid = await call(admin.client, "set_bucket_lifecycle", {
    bucket_name: bucket,
    rules: [{ id: "nothing" }],
    confirm: true,
  });
  expect(textOf(invalid)).toContain("InvalidLifecycleRule");
});

test("object tags: read, merge, replace, S3's limits checked first; retention and legal hold where object lock is on", async () => {
  const addr = { bucket_name: configured, object_key: "docs/a.txt" };
  expect((await call(admin.client, "get_object_tags", addr)).structuredContent!.tags).toEqual({ team: "finance" });
  const dry = await call(admin.client, "put_object_tags", { ...addr, tags: { hold: "legal" } });
  expect(dry.structuredContent).toMatchObject({
    applied: false,
    before: { team: "finance" },
    after: { team: "finance", hold: "legal" },
  });
  await call(admin.client, "put_object_tags", { ...addr, tags: { hold: "legal" }, confirm: true });
  const tags = async () =>
    Object.fromEntries(
      (
        (await sdkClient().send(new GetObjectTaggingCommand({ Bucket: configured, Key: "docs/a.txt" }))).TagSet ?? []
      ).map((t) => [t.Key, t.Value]),
    );
  expect(await tags()).toEqual({ team: "finance", hold: "legal" });
  await call(admin.client, "put_object_tags", { ...addr, tags: { only: "this" }, mode: "replace", confirm: true });
  expect(await tags()).toEqual({ only: "this" });
  const tooMany = await call(admin.client, "put_object_tags", {
    ...addr,
    tags: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, "v"])),
    mode: "replace",
    confirm: true,
  });
  expect(textOf(tooMany)).toContain("TooManyTags");
  const longKey = await call(admin.client, "put_object_tags", {
    ...addr,
    tags: { ["k".repeat(129)]: "v" },
    confirm: true,
  });
  expect(textOf(longKey)).toContain("at most 128");
  expect(await tags()).toEqual({ only: "this" });

  const locked = uniqueBucket("settings-lock");
  await sdkClient().send(new CreateBucketCommand({ Bucket: locked, ObjectLockEnabledForBucket: true }));
  await sdkClient().send(
    new PutObjectCommand({ Bucket: locked, Key: "k", Body: "x", ObjectLockLegalHoldStatus: "ON" }),
  );
  const held = await call(admin.client, "get_object_tags", { bucket_name: locked, object_key: "k" });
  expect(held.isError, textOf(held)).toBeFalsy();
  expect(held.structuredContent).toMatchObject({ tags: {}, legal_hold: "ON" });
  // head_object reports the lock too: the legal hold, and a retention's mode and date in words.
  const until = new Date(Date.now() + 86_400_000);
  await sdkClient().send(
    new PutObjectCommand({
      Bucket: locked,
      Key: "kept",
      Body: "y",
      ObjectLockMode: "GOVERNANCE",
      ObjectLockRetainUntilDate: until,
    }),
  );
  const heldHead = await call(admin.client, "head_object", { bucket_name: locked, object_key: "k" });
  expect(heldHead.structuredContent!.object_lock).toMatchObject({ legal_hold: "ON" });
  expect(textOf(heldHead)).toContain("Legal hold ON");
  const keptHead = await call(admin.client, "head_object", { bucket_name: locked, object_key: "kept" });
  expect(keptHead.structuredContent!.object_lock).toMatchObject({ mode: "GOVERNANCE" });
  expect(Math.abs(Date.parse(keptHead.structuredContent!.object_lock.retain_until) - until.getTime())).toBeLessThan(
    2_000,
  );
  expect(textOf(keptHead)).toContain("Retention GOVERNANCE until");
  // An object without any: none of the three.
  const plainHead = await call(admin.client, "head_object", { bucket_name: locked, object_key: "k" });
  expect(plainHead.structuredContent!.restore).toBeNull();
  expect(
    (await call(admin.client, "get_bucket_settings", { bucket_name: locked })).structuredContent!.settings.object_lock
      .state,
  ).toBe("set");
});

test("a store that answers NotImplemented for some parts: those are 'not supported', the rest still read", async () => {
  const fake = await startFakeS3();
  fake.handle((req) => {
    if (req.query.has("location"))
      return {
        body: xml('<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">eu-west-1</LocationConstraint>'),
      };
    if (req.query.has("versioning"))
      return { body: xml("<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>") };
    if (req.query.has("policy"))
      return { status: 404, body: xml("<Error><Code>NoSuchBucketPolicy</Code><Message>none</Message></Error>") };
    return { status: 501, body: xml("<Error><Code>NotImplemented</Code><Message>not here</Message></Error>") };
  });
  const session = await connectBinary({ env: fakeEnv(fake) });
  try {
    const result = await call(session.client, "get_bucket_settings", { bucket_name: "b" });
    expect(result.isError, textOf(result)).toBeFalsy();
    const s = result.structuredContent!;
    expect(s.settings.location).toEqual({ state: "set", value: "eu-west-1" });
    expect(s.settings.versioning.value.status).toBe("Suspended");
    expect(s.settings.policy.state).toBe("not set");
    for (const part of ["lifecycle", "cors", "encryption", "ownership", "tags"])
      expect(s.settings[part].state, part).toBe("not supported");
    expect(s.summary).toContain("versioning suspended");
    expect(s.summary).toContain("this store does not support");
  } finally {
    await session.close();
    await fake.stop();
  }
});

test("gating: the change tools only with --allow-admin, never read-only; --tools selects; reads are always there", async () => {
  const names = async (env: Record<string, string>, args: string[] = []) => {
    const session = await connectBinary({ env: { ...s3Env(), ...env }, args });
    try {
      return (await session.client.listTools()).tools.map((t) => t.name);
    } finally {
      await session.close();
    }
  };
  const CHANGES = [
    "put_object_tags",
    "set_bucket_versioning",
    "set_bucket_lifecycle",
    "set_bucket_cors",
    "set_bucket_policy",
    "delete_bucket_policy",
    "set_object_lock",
    "restore_object",
  ];
  const plainList = await names({});
  expect(plainList).toContain("get_bucket_settings");
  expect(plainList).toContain("get_object_tags");
  for (const tool of CHANGES) expect(plainList).not.toContain(tool);
  const adminList = await names({ STORE_ALLOW_ADMIN: "true" });
  for (const tool of CHANGES) expect(adminList).toContain(tool);
  const readOnly = await names({ STORE_ALLOW_ADMIN: "true", STORE_READ_ONLY: "true" });
  for (const tool of CHANGES) expect(readOnly).not.toContain(tool);
  expect(readOnly).toContain("get_bucket_settings");
  expect(await names({}, ["--allow-admin", "--tools", "get_bucket_settings,set_bucket_cors"])).toEqual([
    "get_bucket_settings",
    "set_bucket_cors",
  ]);
});

test("with each of the other parts set through the SDK, get_bucket_settings reads it back (or says the store does not support it, as the store said)", async () => {
  const bucket = await freshBucket("settings-parts");
  const put = (send: Promise<unknown>) =>
    send.then(
      () => "set",
      (e: { name?: string; $metadata?: { httpStatusCode?: number } }) =>
        e.name === "NotImplemented" || e.$metadata?.httpStatusCode === 501 ? "not supported" : `failed: ${e.name}`,
    );
  const stored = {
    tags: await put(
      sdkClient().send(
        new PutBucketTaggingCommand({ Bucket: bucket, Tagging: { TagSet: [{ Key: "team", Value: "data" }] } }),
      ),
    ),
    public_access_block: await put(
      sdkClient().send(
        new PutPublicAccessBlockCommand({
          Bucket: bucket,
          PublicAccessBlockConfiguration: {
            BlockPublicAcls: true,
            IgnorePublicAcls: true,
            BlockPublicPolicy: true,
            RestrictPublicBuckets: true,
          },
        }),
      ),
    ),
    // Ceph RGW 16 refuses these two (InvalidArgument: no SSE-S3 backend, no ownership controls): the tool must then not report them as set.
    encryption: await put(
      sdkClient().send(
        new PutBucketEncryptionCommand({
          Bucket: bucket,
          ServerSideEncryptionConfiguration: {
            Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
          },
        }),
      ),
    ),
    ownership: await put(
      sdkClient().send(
        new PutBucketOwnershipControlsCommand({
          Bucket: bucket,
          OwnershipControls: { Rules: [{ ObjectOwnership: "BucketOwnerEnforced" }] },
        }),
      ),
    ),
  };
  const result = (await call(admin.client, "get_bucket_settings", { bucket_name: bucket })).structuredContent!;
  const settings = result.settings;
  for (const [part, state] of Object.entries(stored)) {
    if (state.startsWith("failed")) expect(settings[part].state, `${part}: ${state}`).not.toBe("set");
    else expect(settings[part].state, part).toBe(state);
  }
  expect(stored.tags).toBe("set");
  expect(settings.tags.value).toEqual({ team: "data" });
  expect(stored.public_access_block).toBe("set");
  expect(settings.public_access_block.value).toEqual({
    block_public_acls: true,
    ignore_public_acls: true,
    block_public_policy: true,
    restrict_public_buckets: true,
  });
  expect(result.summary).toContain("public access blocked");
  if (stored.encryption === "set") expect(settings.encryption.value[0].algorithm).toBe("AES256");
});

test("with elicitation the user confirms a change: declined, nothing changes although the model confirmed", async () => {
  const bucket = await freshBucket("settings-ask");
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["--allow-admin"],
    env: { PATH: process.env.PATH ?? "/usr/bin", HOME: process.env.HOME ?? "/root", ...s3Env() },
    stderr: "ignore",
  });
  const client = new Client({ name: "eliciting", version: "1" }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return { action: "decline" };
  });
  await client.connect(transport);
  try {
    const r = await call(client, "set_bucket_versioning", { bucket_name: bucket, status: "Enabled", confirm: true });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("never be turned off");
    expect(r.structuredContent).toMatchObject({ applied: false });
    expect(textOf(r)).toContain("declined");
    expect((await sdkClient().send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status).toBeUndefined();
  } finally {
    await client.close();
  }
});

test("a change to what is already there asks nobody and writes nothing: versioning, tags and policy say so", async () => {
  const bucket = await freshBucket("settings-same");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "t.txt", Body: "t", Tagging: "team=finance" }));
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["--allow-admin"],
    env: { PATH: process.env.PATH ?? "/usr/bin", HOME: process.env.HOME ?? "/root", ...s3Env() },
    stderr: "ignore",
  });
  const client = new Client({ name: "eliciting", version: "1" }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return { action: "accept", content: { confirm: true } };
  });
  await client.connect(transport);
  const policy = JSON.stringify({
    Version: "2012-10-17",
    Statement: [
      {
        Effect: "Allow",
        Principal: { AWS: ["arn:aws:iam:::user/someone"] },
        Action: ["s3:GetObject"],
        Resource: [`arn:aws:s3:::${bucket}/*`],
      },
    ],
  });
  try {
    // Each first made so (one question each), then asked for again: no question, nothing applied, the result says it was already so.
    for (const [tool, args] of [
      ["set_bucket_versioning", { bucket_name: bucket, status: "Enabled", confirm: true }],
      ["put_object_tags", { bucket_name: bucket, object_key: "t.txt", tags: { team: "finance" }, confirm: true }],
      ["set_bucket_policy", { bucket_name: bucket, policy, confirm: true }],
    ] as const) {
      const first = await call(client, tool, args);
      const askedBefore = asked.length;
      const again = await call(client, tool, args);
      expect(again.isError).toBeFalsy();
      expect(asked.length).toBe(askedBefore);
      expect(again.structuredContent).toMatchObject({ applied: false });
      expect(again.structuredContent?.next).toBeUndefined();
      expect(textOf(again)).toContain("Already so");
      // put_object_tags with the tags the object already has never needed the first change either.
      if (tool !== "put_object_tags") expect(first.structuredContent).toMatchObject({ applied: true });
    }
    expect(asked).toHaveLength(2);
    // A dry run of no change says so too, and does not tell the model to confirm.
    const dry = await call(client, "set_bucket_versioning", { bucket_name: bucket, status: "Enabled" });
    expect(textOf(dry)).toContain("Already so");
    expect(dry.structuredContent?.next).toBeUndefined();
    // A real change still asks.
    const suspend = await call(client, "set_bucket_versioning", {
      bucket_name: bucket,
      status: "Suspended",
      confirm: true,
    });
    expect(asked).toHaveLength(3);
    expect(suspend.structuredContent).toMatchObject({ applied: true, before: "Enabled", after: "Suspended" });
  } finally {
    await client.close();
  }
});

test("get_object_tags under object lock: a retention the store refuses to show is the call's error, not 'no retention'", async () => {
  const fake = await startFakeS3();
  fake.handle((req) => {
    if (req.query.has("tagging"))
      return { body: xml("<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>") };
    if (req.query.has("object-lock"))
      return {
        body: xml("<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>"),
      };
    if (req.query.has("legal-hold"))
      return {
        status: 404,
        body: xml("<Error><Code>NoSuchObjectLockConfiguration</Code><Message>none</Message></Error>"),
      };
    return { status: 403, body: xml("<Error><Code>AccessDenied</Code><Message>no</Message></Error>") };
  });
  const session = await connectBinary({ env: fakeEnv(fake) });
  try {
    const result = await call(session.client, "get_object_tags", { bucket_name: "b", object_key: "k" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("AccessDenied");
  } finally {
    await session.close();
    await fake.stop();
  }
});

test("a lifecycle change that expires objects or versions, or replaces the rules, deletes: it needs the delete permission (flag and store setting)", async () => {
  const bucket = await freshBucket("settings-nodelete");
  const server = s3Env();
  // Admin without deletes; a second store "keep" on the same Ceph with deletes off, the default store with them on.
  const noDelete = await connectBinary({ env: { ...server, STORE_ALLOW_ADMIN: "true" } });
  const perStore = await connectBinary({
    env: {
      ...server,
      STORE_ALLOW_ADMIN: "true",
      STORE_ALLOW_DELETE: "true",
      STORE_STORES: "keep",
      STORE_KEEP_ENDPOINT_URL: server.STORE_ENDPOINT_URL!,
      STORE_KEEP_ACCESS_KEY_ID: server.STORE_ACCESS_KEY_ID!,
      STORE_KEEP_SECRET_ACCESS_KEY: server.STORE_SECRET_ACCESS_KEY!,
      STORE_KEEP_REGION: server.STORE_REGION!,
      STORE_KEEP_ALLOW_DELETE: "false",
    },
  });
  try {
    const deleting = [
      { rules: [{ id: "all", expire_after_days: 1 }] },
      { rules: [{ id: "old", noncurrent_expire_after_days: 1 }] },
      { rules: [{ id: "few", keep_noncurrent_versions: 1, noncurrent_expire_after_days: 30 }] },
      { rules: [{ id: "cold", transition_after_days: 30, transition_storage_class: "GLACIER" }], replace: true },
    ];
    for (const args of deleting) {
      for (const [client, extra] of [
        [noDelete.client, {}],
        [perStore.client, { store: "keep" }],
      ] as const) {
        const refused = await call(client, "set_bucket_lifecycle", {
          bucket_name: bucket,
          ...args,
          ...extra,
          confirm: true,
        });
        expect(refused.isError, JSON.stringify(args)).toBe(true);
        expect(textOf(refused)).toContain("DeleteNotAllowed");
        expect(textOf(refused)).toContain("lifecycle");
      }
    }
    await expect(sdkClient().send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).rejects.toThrow();
    // Aborting incomplete uploads or moving to another class deletes no object: the admin right is enough.
    const harmless = await call(noDelete.client, "set_bucket_lifecycle", {
      bucket_name: bucket,
      rules: [{ id: "uploads", abort_incomplete_uploads_after_days: 3 }],
      confirm: true,
    });
    expect(harmless.isError, textOf(harmless)).toBeFalsy();
    // The same store with deletes on takes the expiry.
    const allowed = await call(perStore.client, "set_bucket_lifecycle", {
      bucket_name: bucket,
      rules: [{ id: "tmp", prefix: "tmp/", expire_after_days: 1 }],
      confirm: true,
    });
    expect(allowed.isError, textOf(allowed)).toBeFalsy();
    const description = (await noDelete.client.listTools()).tools.find((t) => t.name === "set_bucket_lifecycle")!
      .description!;
    expect(description).toContain("need delete");
  } finally {
    await noDelete.close();
    await perStore.close();
  }
});
