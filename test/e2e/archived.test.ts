/**
 * An archived object (GLACIER, DEEP_ARCHIVE, an archive tier) as S3 answers
 * it: a HEAD that works and a GET refused with InvalidObjectState. No store
 * this suite runs archives objects (Ceph 16 has no archive tiers), so a small
 * fake store answers as S3 does. get_object reads and downloads, and copies,
 * say ObjectArchived with the storage class and how a restore is made;
 * nothing is written locally. download_prefix counts archived objects apart,
 * fetches the others, and finishes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type FakeResponse, type FakeS3, fakeEnv, startFakeS3, xml } from "../helpers/fake-s3.ts";
import { tempDir } from "../helpers/files.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";

let fake: FakeS3;
let dir: string;
let session: Awaited<ReturnType<typeof connectBinary>>;

const WARM = "warm bytes";
const md5 = (s: string) => createHash("md5").update(s).digest("hex");
/** cold/ holds one object still in STANDARD and two in DEEP_ARCHIVE. */
const listing = () =>
  xml(
    `<ListBucketResult><Name>b</Name><Prefix>cold/</Prefix><KeyCount>3</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${[
      ["cold/report.txt", 10, "DEEP_ARCHIVE", "0123456789abcdef0123456789abcdef"],
      ["cold/summary.txt", 10, "DEEP_ARCHIVE", "0123456789abcdef0123456789abcdef"],
      ["cold/warm.txt", WARM.length, "STANDARD", md5(WARM)],
    ]
      .map(
        ([key, size, cls, etag]) =>
          `<Contents><Key>${key}</Key><LastModified>2026-11-02T00:00:00.000Z</LastModified><ETag>"${etag}"</ETag><Size>${size}</Size><StorageClass>${cls}</StorageClass></Contents>`,
      )
      .join("")}</ListBucketResult>`,
  );

const ARCHIVED = xml(
  "<Error><Code>InvalidObjectState</Code><Message>The operation is not valid for the object's storage class</Message><StorageClass>DEEP_ARCHIVE</StorageClass><RequestId>r</RequestId></Error>",
);

beforeAll(async () => {
  fake = await startFakeS3();
  dir = tempDir("archived");
  fake.handle((req): FakeResponse => {
    if (req.method === "GET" && req.query.get("list-type") === "2")
      return { headers: { "content-type": "application/xml" }, body: listing() };
    if (req.method === "GET" && req.path.endsWith("/warm.txt"))
      return {
        headers: { "content-length": String(WARM.length), etag: `"${md5(WARM)}"`, "content-type": "text/plain" },
        body: WARM,
      };
    if (req.method === "HEAD")
      return {
        headers: {
          "content-length": "10",
          etag: '"0123456789abcdef0123456789abcdef"',
          "last-modified": "Mon, 02 Nov 2026 00:00:00 GMT",
          "x-amz-storage-class": "DEEP_ARCHIVE",
          "content-type": "text/plain",
        },
      };
    return { status: 403, headers: { "content-type": "application/xml" }, body: ARCHIVED };
  });
  session = await connectBinary({ env: fakeEnv(fake), args: ["--allowed-dir", dir] });
}, 30_000);
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});

test("get_object (read and download) and copy_object of an archived object say ObjectArchived, its class and how to restore it; download_prefix counts them apart", async () => {
  for (const [tool, args] of [
    ["get_object", { bucket_name: "b", object_key: "cold/report.txt" }],
    ["get_object", { bucket_name: "b", object_key: "cold/report.txt", mode: "download", local_path: "report.txt" }],
    [
      "copy_object",
      { source_bucket: "b", source_key: "cold/report.txt", bucket_name: "b", object_key: "warm/report.txt" },
    ],
  ] as const) {
    const r = await call(session.client, tool, args);
    expect(r.isError, tool).toBe(true);
    const text = textOf(r);
    expect(text, tool).toContain("ObjectArchived");
    expect(text, tool).toContain("restore-object --bucket b --key cold/report.txt");
    expect(text, tool).toContain('restore_object with bucket_name "b", object_key "cold/report.txt"');
    if (tool === "get_object") expect(text).toContain("DEEP_ARCHIVE");
  }
  expect(existsSync(join(dir, "report.txt"))).toBe(false);
  expect(readdirSync(dir)).toEqual([]);
  // A prefix with archived objects: they are counted apart, the rest is fetched, and the job finishes.
  const bulk = await call(session.client, "download_prefix", { bucket_name: "b", prefix: "cold/", local_dir: "cold" });
  expect(bulk.isError, textOf(bulk)).toBeFalsy();
  expect(bulk.structuredContent).toMatchObject({ complete: true, counts: { done: 1, archived: 2, failed: 0 } });
  const problems = bulk.structuredContent!.problems as { kind: string; name: string; code: string }[];
  expect(problems.map((p) => p.name).sort()).toEqual(["cold/report.txt", "cold/summary.txt"]);
  for (const p of problems) expect(p).toMatchObject({ kind: "archived", code: "ObjectArchived" });
  expect(textOf(bulk)).toContain("2 archived, not read");
  expect(textOf(bulk)).toContain("restore_object with the same bucket and prefix");
  expect(readdirSync(join(dir, "cold"))).toEqual(["warm.txt"]);
  // The session goes on.
  expect(
    (await call(session.client, "head_object", { bucket_name: "b", object_key: "cold/report.txt" })).isError,
  ).toBeFalsy();
});
