/**
 * restore_object through the binary. No store this suite runs archives
 * objects (Ceph 16 has no archive tiers, and moto is not in the wheel
 * mirror), so a small fake store answers RestoreObject as S3 does: 202 when
 * a restore starts, 200 for a copy already restored, 409
 * RestoreAlreadyInProgress. One object and a prefix (as a job past the call
 * budget), each a dry run first; the request carries the days and tier; only
 * archived objects are asked for (an Intelligent-Tiering object only when its
 * HEAD names an archive tier); every refusal sends no restore.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { type FakeResponse, type FakeS3, fakeEnv, startFakeS3, xml } from "../helpers/fake-s3.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";

let fake: FakeS3;
/** How long the store takes to answer a restore (the prefix job's calls outlast a 1 s budget). */
let restoreDelayMs = 0;

/** Key, size, storage class, and for Intelligent-Tiering the archive tier a HEAD names (x-amz-archive-status). */
const OBJECTS: [string, number, string, string?][] = [
  ["cold/a.csv", 100, "DEEP_ARCHIVE"],
  ["cold/b.csv", 200, "GLACIER"],
  ["cold/c.csv", 300, "DEEP_ARCHIVE"],
  ["cold/warm.csv", 50, "STANDARD"],
  ["cold/tiered-archived.csv", 400, "INTELLIGENT_TIERING", "DEEP_ARCHIVE_ACCESS"],
  ["cold/tiered-frequent.csv", 70, "INTELLIGENT_TIERING"],
];
/** Listed, then deleted before its HEAD (404): nothing to restore, and no reason to fail the rest. */
const GONE: [string, number, string][] = [["cold/tiered-gone.csv", 80, "INTELLIGENT_TIERING"]];
const listing = () =>
  xml(
    `<ListBucketResult><Name>b</Name><Prefix>cold/</Prefix><KeyCount>${OBJECTS.length + GONE.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${[
      ...OBJECTS,
      ...GONE,
    ]
      .map(
        ([key, size, cls]) =>
          `<Contents><Key>${key}</Key><LastModified>2026-11-02T00:00:00.000Z</LastModified><ETag>"0123456789abcdef0123456789abcdef"</ETag><Size>${size}</Size><StorageClass>${cls}</StorageClass></Contents>`,
      )
      .join("")}</ListBucketResult>`,
  );
const restores = () => fake.requests.filter((r) => r.method === "POST" && r.query.has("restore"));

beforeAll(async () => {
  fake = await startFakeS3();
  fake.handle(async (req): Promise<FakeResponse> => {
    if (req.method === "GET" && req.query.get("list-type") === "2")
      return { headers: { "content-type": "application/xml" }, body: listing() };
    const object = OBJECTS.find(([key]) => req.path === `/b/${key}`);
    if (!object)
      return {
        status: 404,
        headers: { "content-type": "application/xml" },
        body: xml("<Error><Code>NoSuchKey</Code></Error>"),
      };
    if (req.method === "HEAD")
      return {
        headers: {
          "content-length": String(object[1]),
          etag: '"0123456789abcdef0123456789abcdef"',
          "last-modified": "Mon, 02 Nov 2026 00:00:00 GMT",
          ...(object[2] === "STANDARD" ? {} : { "x-amz-storage-class": object[2] }),
          ...(object[3] ? { "x-amz-archive-status": object[3] } : {}),
        },
      };
    if (req.method === "POST" && req.query.has("restore")) {
      await Bun.sleep(restoreDelayMs);
      if (object[0] === "cold/b.csv")
        return {
          status: 409,
          headers: { "content-type": "application/xml" },
          body: xml(
            "<Error><Code>RestoreAlreadyInProgress</Code><Message>Object restore is already in progress</Message></Error>",
          ),
        };
      return { status: object[0] === "cold/c.csv" ? 200 : 202 };
    }
    return {
      status: 403,
      headers: { "content-type": "application/xml" },
      body: xml("<Error><Code>AccessDenied</Code></Error>"),
    };
  });
}, 30_000);
afterAll(() => fake?.stop());

test("one archived object: a dry run that says tier and days, then the restore request; a STANDARD object is not asked for", async () => {
  const session = await connectBinary({ env: fakeEnv(fake), args: ["--allow-admin"] });
  try {
    const args = { bucket_name: "b", object_key: "cold/a.csv", days: 3, tier: "Bulk" };
    const dry = await call(session.client, "restore_object", args);
    expect(dry.isError, textOf(dry)).toBeFalsy();
    expect(textOf(dry)).toContain("Dry run");
    expect(textOf(dry)).toContain("Bulk tier, kept 3 day(s)");
    expect(restores()).toHaveLength(0);

    const done = await call(session.client, "restore_object", { ...args, confirm: true });
    expect(done.structuredContent).toMatchObject({ applied: true, counts: { started: 1 }, tier: "Bulk", days: 3 });
    expect(restores().map((r) => r.path)).toEqual(["/b/cold/a.csv"]);
    const body = restores()[0]!.body.toString();
    expect(body).toContain("<Days>3</Days>");
    expect(body).toContain("<Tier>Bulk</Tier>");

    const restoreOne = (key: string) =>
      call(session.client, "restore_object", { bucket_name: "b", object_key: key, days: 1, confirm: true });
    const warm = await restoreOne("cold/warm.csv");
    expect(warm.isError).toBe(true);
    expect(textOf(warm)).toContain("NotArchived");
    // Intelligent-Tiering: restored only from an archive tier, which head_object names.
    const frequent = await restoreOne("cold/tiered-frequent.csv");
    expect(textOf(frequent)).toContain("NotArchived");
    expect(restores()).toHaveLength(1);
    const head = await call(session.client, "head_object", {
      bucket_name: "b",
      object_key: "cold/tiered-archived.csv",
    });
    expect(head.structuredContent).toMatchObject({
      storage_class: "INTELLIGENT_TIERING",
      archive_status: "DEEP_ARCHIVE_ACCESS",
    });
    expect(textOf(head)).toContain("DEEP_ARCHIVE_ACCESS archive tier: restore_object");
    const tiered = await restoreOne("cold/tiered-archived.csv");
    expect(tiered.structuredContent, textOf(tiered)).toMatchObject({ applied: true, counts: { started: 1 } });
    expect(restores()).toHaveLength(2);
  } finally {
    await session.close();
    fake.requests.length = 0;
  }
}, 30_000);

test("a prefix: only its archived objects (an Intelligent-Tiering one by its HEAD), as a job past the call budget; under way and already restored counted apart", async () => {
  restoreDelayMs = 1_500;
  const session = await connectBinary({ env: fakeEnv(fake), args: ["--allow-admin", "--call-budget", "1"] });
  try {
    const args = { bucket_name: "b", prefix: "cold/", days: 2 };
    const dry = await call(session.client, "restore_object", args);
    expect(dry.structuredContent).toMatchObject({ applied: false, matched: 4, bytes: 1000 });
    expect(restores()).toHaveLength(0);

    const handed = await call(session.client, "restore_object", { ...args, confirm: true });
    const id = handed.structuredContent?.job?.id;
    expect(id, textOf(handed)).toBeTruthy();
    let status = await call(session.client, "job_status", { job_id: id });
    for (let i = 0; i < 30 && status.structuredContent?.job?.state === "running"; i++)
      status = await call(session.client, "job_status", { job_id: id });
    expect(status.structuredContent?.job?.state).toBe("done");
    expect(textOf(status)).toContain("2 started, 1 already under way, 1 already restored");
    expect(
      restores()
        .map((r) => r.path)
        .sort(),
    ).toEqual(["/b/cold/a.csv", "/b/cold/b.csv", "/b/cold/c.csv", "/b/cold/tiered-archived.csv"]);
  } finally {
    restoreDelayMs = 0;
    await session.close();
    fake.requests.length = 0;
  }
}, 60_000);

test("refused without --allow-admin, and declined by the user: no restore is sent", async () => {
  const plain = await connectBinary({ env: fakeEnv(fake) });
  try {
    expect((await plain.client.listTools()).tools.map((t) => t.name)).not.toContain("restore_object");
    const r = await call(plain.client, "restore_object", {
      bucket_name: "b",
      object_key: "cold/a.csv",
      days: 1,
      confirm: true,
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("does not offer it");
  } finally {
    await plain.close();
  }
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["--allow-admin"],
    env: { PATH: process.env.PATH ?? "/usr/bin", HOME: process.env.HOME ?? "/root", ...fakeEnv(fake) },
    stderr: "ignore",
  });
  const client = new Client({ name: "eliciting", version: "1" }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(
      `${req.params.message} ${JSON.stringify("requestedSchema" in req.params ? req.params.requestedSchema : null)}`,
    );
    return { action: "decline" };
  });
  await client.connect(transport);
  try {
    const r = await call(client, "restore_object", { bucket_name: "b", prefix: "cold/", days: 1, confirm: true });
    expect(r.structuredContent).toMatchObject({ applied: false, confirmation: "declined" });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("bills each restore");
  } finally {
    await client.close();
  }
  expect(restores()).toHaveLength(0);
});
