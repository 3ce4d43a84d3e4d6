/**
 * Transfers that resume after a cut, through the compiled binary against
 * Ceph RGW behind a recording proxy that can hold requests (so a cut lands
 * at a known point): an upload cut by kill -9 or by a host that gives up on
 * the call (budget off) keeps its multipart upload, and the same call
 * continues it — only the parts the store lacks are sent again, each stored
 * part checked against the local bytes; a changed file starts over and the
 * old upload is aborted; an upload kept past 24 h is aborted by the next one.
 * Nothing is visible at the key before the end, nothing is left after it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { ageRecords, keptRecords } from "../helpers/kept.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";
import { type Recorded, startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
/** Five parts of S3's 5 MiB minimum: 5, 5, 5, 5, 4 MiB. */
const SIZE = 24 * MiB;
const PARTS = 5;
const md5 = (b: Uint8Array) => createHash("md5").update(b).digest("hex");

let bucket: string;
let dir: string;
let proxy: ReturnType<typeof startRecordingProxy>;
/** While set, UploadPart requests for part 3 and on are held (never reach the store). */
let holding = false;

const partNumber = (r: Recorded) =>
  r.method === "PUT" ? Number(new URLSearchParams(r.search).get("partNumber") ?? NaN) : NaN;
const partsSent = (from: number) => proxy.requests.slice(from).filter((r) => !Number.isNaN(partNumber(r)));
const uploadsOpen = async () =>
  (await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
const objectsAt = async (key: string) =>
  (await sdkClient().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key }))).Contents ?? [];
const stored = async (key: string) =>
  md5(await (await sdkClient().send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray());

beforeAll(async () => {
  bucket = await freshBucket("resume");
  dir = tempDir("resume");
  proxy = startRecordingProxy(s3().endpoint, (r) =>
    holding && partNumber(r) >= 3 ? new Promise<void>(() => {}) : undefined,
  );
}, 60_000);
afterAll(() => proxy?.stop());

/** A server through the proxy, budget off (a host that gives up is the only thing between the call and its end), its own state directory. */
function serve(state: string) {
  return connectBinary({
    env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint, STORE_CALL_BUDGET_SECONDS: "0", STORE_STATE_DIR: state },
    args: ["--allowed-dir", dir],
  });
}

/** Waits until parts 3, 4 and 5 are held: parts 1 and 2 are then stored (their workers moved on). */
async function untilHeld(from: number) {
  for (
    let i = 0;
    i < 400 &&
    new Set(
      partsSent(from)
        .map(partNumber)
        .filter((n) => n >= 3),
    ).size < 3;
    i++
  )
    await Bun.sleep(25);
  expect(
    new Set(
      partsSent(from)
        .map(partNumber)
        .filter((n) => n >= 3),
    ).size,
  ).toBe(3);
}

const upload = (key: string, name: string) => ({
  name: "upload_file",
  arguments: { local_file_path: name, bucket_name: bucket, object_key: key },
});

/**
 * One upload_file of `name` cut by the client's own timeout (the TypeScript SDK then sends notifications/cancelled,
 * as a host that gives up does) while parts 3-5 are held; the holds lifted after, the server's clean-up let run.
 */
/** The host gives up once every part has gone out (parts 3 and on held), however slow the machine. */
async function cutUpload(client: Awaited<ReturnType<typeof serve>>["client"], name: string): Promise<void> {
  holding = true;
  const from = proxy.requests.length;
  const giveUp = new AbortController();
  try {
    const pending = client.callTool(upload(name, name), undefined, { signal: giveUp.signal });
    pending.catch(() => {});
    for (const until = Date.now() + 30_000; new Set(partsSent(from).map(partNumber)).size < PARTS; ) {
      if (Date.now() > until) throw new Error("the upload never sent all its parts");
      await Bun.sleep(50);
    }
    giveUp.abort("the host gave up");
    await expect(pending).rejects.toThrow();
  } finally {
    holding = false;
  }
  await Bun.sleep(500);
}
const keptUploads = (state: string) => keptRecords(state).uploads;

describe("upload_file resumes", () => {
  test("after kill -9: the same call sends only the parts the store lacks, checks the stored ones, and the object is byte-exact", async () => {
    const data = randomBytes(SIZE, 41);
    writeFileSync(join(dir, "killed.bin"), data);
    const state = tempDir("resume-state");
    holding = true;
    const first = await serve(state);
    const from = proxy.requests.length;
    const pending = first.client.callTool(upload("killed.bin", "killed.bin"), undefined, { timeout: 60_000 });
    pending.catch(() => {});
    await untilHeld(from);
    process.kill(first.pid, "SIGKILL");
    await first.close().catch(() => {});
    holding = false;
    expect(await objectsAt("killed.bin")).toEqual([]);
    expect(keptUploads(state).map((u) => u.key)).toEqual(["killed.bin"]);

    const second = await serve(state);
    try {
      const again = proxy.requests.length;
      const result = await call(second.client, "upload_file", upload("killed.bin", "killed.bin").arguments);
      expect(result.isError, textOf(result)).toBeFalsy();
      // Parts 1 and 2 were stored before the kill: listed, checked against the file, not sent again.
      expect(proxy.requests.slice(again).some((r) => r.method === "GET" && r.search.includes("uploadId="))).toBe(true);
      expect(partsSent(again).map(partNumber).sort()).toEqual([3, 4, 5]);
      expect(await stored("killed.bin")).toBe(md5(data));
      expect(await uploadsOpen()).toEqual([]);
      expect(keptUploads(state)).toEqual([]);
    } finally {
      await second.close();
    }
  }, 120_000);

  test("a host that gives up on every call (budget off): calling again continues the upload instead of starting over", async () => {
    const data = randomBytes(SIZE, 42);
    writeFileSync(join(dir, "timed.bin"), data);
    const state = tempDir("resume-state");
    const { client, close } = await serve(state);
    try {
      const from = proxy.requests.length;
      await cutUpload(client, "timed.bin");
      expect(new Set(partsSent(from).map(partNumber))).toEqual(new Set([1, 2, 3, 4, 5]));
      // Kept, not visible: no object at the key, one upload open, recorded.
      expect(await objectsAt("timed.bin")).toEqual([]);
      expect((await uploadsOpen()).map((u) => u.Key)).toEqual(["timed.bin"]);
      expect(keptUploads(state).map((u) => u.key)).toEqual(["timed.bin"]);
      const again = proxy.requests.length;
      const result = await call(client, "upload_file", upload("timed.bin", "timed.bin").arguments);
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(partsSent(again).map(partNumber).sort()).toEqual([3, 4, 5]);
      expect(await stored("timed.bin")).toBe(md5(data));
      expect(await uploadsOpen()).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);

  test("a file changed since the cut starts over: the old upload is aborted, every part is sent, no old byte is mixed in", async () => {
    const state = tempDir("resume-state");
    writeFileSync(join(dir, "changed.bin"), randomBytes(SIZE, 43));
    const { client, close } = await serve(state);
    try {
      await cutUpload(client, "changed.bin");
      const old = keptUploads(state)[0]!.upload_id;
      // Same size, other bytes, a later modification time.
      const fresh = randomBytes(SIZE, 44);
      writeFileSync(join(dir, "changed.bin"), fresh);
      utimesSync(join(dir, "changed.bin"), new Date(), new Date(Date.now() + 5_000));
      const again = proxy.requests.length;
      const result = await call(client, "upload_file", upload("changed.bin", "changed.bin").arguments);
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(partsSent(again).map(partNumber).sort()).toEqual([1, 2, 3, 4, 5]);
      expect(partsSent(again).every((r) => !r.search.includes(old))).toBe(true);
      expect(await stored("changed.bin")).toBe(md5(fresh));
      expect(await uploadsOpen()).toEqual([]);
      expect(keptUploads(state)).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);

  test("an upload kept longer than 24 h is aborted by the next upload to the store", async () => {
    const state = tempDir("resume-state");
    writeFileSync(join(dir, "stale.bin"), randomBytes(SIZE, 45));
    const { client, close } = await serve(state);
    try {
      await cutUpload(client, "stale.bin");
      expect((await uploadsOpen()).map((u) => u.Key)).toEqual(["stale.bin"]);
      ageRecords(state, "uploads", 25 * 3600 * 1000);
      writeFileSync(join(dir, "other.bin"), randomBytes(SIZE, 46));
      const result = await call(client, "upload_file", upload("other.bin", "other.bin").arguments);
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(await uploadsOpen()).toEqual([]);
      expect(keptUploads(state)).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);
});

describe("get_object download resumes", () => {
  // Through a link of 2 MiB/s a connection: the first 2 MiB range takes a second, then three ranges run at once.
  let slow: FaultProxy;
  let recorder: ReturnType<typeof startRecordingProxy>;
  let data: Uint8Array;
  beforeAll(async () => {
    slow = await startFaultProxy(s3().endpoint);
    slow.set({ kind: "throttle", bytesPerSecond: 2 * MiB });
    recorder = startRecordingProxy(slow.endpoint);
    data = randomBytes(SIZE, 51);
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "down.bin", Body: data }));
  }, 60_000);
  afterAll(async () => {
    recorder?.stop();
    await slow?.stop();
  });

  const serveSlow = (state: string) =>
    connectBinary({
      env: {
        ...s3Env(),
        STORE_ENDPOINT_URL: recorder.endpoint,
        STORE_CALL_BUDGET_SECONDS: "0",
        STORE_STATE_DIR: state,
      },
      args: ["--allowed-dir", dir],
    });
  const download = (to: string) => ({
    name: "get_object",
    arguments: { bucket_name: bucket, object_key: "down.bin", mode: "download", local_path: to },
  });
  const keptDownloads = (state: string) => keptRecords(state).downloads;
  /** Bytes the GETs since `from` asked for. */
  const bytesAsked = (from: number) =>
    recorder.requests
      .slice(from)
      .filter((r) => r.method === "GET" && r.range)
      .reduce((sum, r) => {
        const [, a, b] = /bytes=(\d+)-(\d+)/.exec(r.range!)!;
        return sum + Number(b) - Number(a) + 1;
      }, 0);
  const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
  const hiddenIn = (sub: string) =>
    existsSync(join(dir, sub)) ? readdirSync(join(dir, sub)).filter((f) => f.startsWith(".")) : [];

  for (const cut of ["a host that gives up (budget off)", "kill -9", "SIGTERM (a restart)"] as const) {
    test(`after ${cut}: the temp file is kept hidden and recorded; the same call fetches only what it lacks; the file is byte-exact`, async () => {
      const sub = cut === "kill -9" ? "dl-killed" : cut === "SIGTERM (a restart)" ? "dl-stopped" : "dl-timed";
      const state = tempDir("resume-state");
      const first = await serveSlow(state);
      const giveUp = new AbortController();
      const pending = first.client.callTool(download(`${sub}/down.bin`), undefined, { signal: giveUp.signal });
      pending.catch(() => {});
      // Cut once the record holds more than the first range (it is written every second), however slow the machine.
      const recorded = () => (keptDownloads(state)[0]?.have ?? []).reduce((sum, [a, b]) => sum + b - a, 0);
      for (const until = Date.now() + 30_000; recorded() <= 2 * MiB && Date.now() < until; ) await Bun.sleep(50);
      if (cut === "a host that gives up (budget off)") {
        giveUp.abort("the host gave up");
        await expect(pending).rejects.toThrow();
      } else {
        process.kill(first.pid, cut === "kill -9" ? "SIGKILL" : "SIGTERM");
      }
      await first.close().catch(() => {});
      await Bun.sleep(300);
      expect(existsSync(join(dir, sub, "down.bin"))).toBe(false);
      expect(hiddenIn(sub)).toHaveLength(1);
      const kept = keptDownloads(state);
      expect(kept.map((d) => d.target)).toEqual([join(dir, sub, "down.bin")]);
      const had = kept[0]!.have.reduce((sum, [a, b]) => sum + b - a, 0);
      expect(had).toBeGreaterThan(2 * MiB);

      const second = await serveSlow(state);
      try {
        const from = recorder.requests.length;
        const result = await call(second.client, "get_object", download(`${sub}/down.bin`).arguments);
        expect(result.isError, textOf(result)).toBeFalsy();
        expect(result.structuredContent!.sha256).toBe(sha256(data));
        expect(sha256(readFileSync(join(dir, sub, "down.bin")))).toBe(sha256(data));
        // Every GET pinned to the object (If-Match), and fewer bytes asked for than the object has: what was kept is not fetched again.
        expect(
          recorder.requests
            .slice(from)
            .filter((r) => r.method === "GET" && r.range && r.range !== "bytes=0-2097151")
            .every((r) => r.ifMatch !== null),
        ).toBe(true);
        expect(bytesAsked(from)).toBeLessThanOrEqual(SIZE - had + 2 * MiB);
        expect(hiddenIn(sub)).toEqual([]);
        expect(keptDownloads(state)).toEqual([]);
      } finally {
        await second.close();
      }
    }, 120_000);
  }

  test("an object replaced since the cut starts over: the kept file is removed, the new object lands whole, no old byte mixed in", async () => {
    const state = tempDir("resume-state");
    await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "down.bin", Body: data }));
    const { client, close } = await serveSlow(state);
    try {
      await cutDownload(client, "dl-replaced/down.bin");
      expect(hiddenIn("dl-replaced")).toHaveLength(1);
      const replaced = randomBytes(SIZE, 52);
      await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "down.bin", Body: replaced }));
      const from = recorder.requests.length;
      const result = await call(client, "get_object", download("dl-replaced/down.bin").arguments);
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(sha256(readFileSync(join(dir, "dl-replaced", "down.bin")))).toBe(sha256(replaced));
      expect(bytesAsked(from)).toBeGreaterThanOrEqual(SIZE);
      expect(hiddenIn("dl-replaced")).toEqual([]);
      expect(keptDownloads(state)).toEqual([]);
    } finally {
      await close();
      await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "down.bin", Body: data }));
    }
  }, 120_000);

  /** A download to `to` cut by the client's own timeout, part way through; the server's clean-up let run. */
  async function cutDownload(client: Awaited<ReturnType<typeof serveSlow>>["client"], to: string): Promise<void> {
    await expect(client.callTool(download(to), undefined, { timeout: 3_500 })).rejects.toThrow(/timed out/i);
    await Bun.sleep(300);
  }

  test("a kept temp file that is not what was recorded (cut short since) starts over: removed first, the object fetched whole, byte-exact", async () => {
    const state = tempDir("resume-state");
    const { client, close } = await serveSlow(state);
    try {
      await cutDownload(client, "dl-trunc/down.bin");
      const [temp] = keptDownloads(state).map((d) => d.temp);
      expect(temp).toBeDefined();
      truncateSync(temp!, 1024);
      const from = recorder.requests.length;
      const result = await call(client, "get_object", download("dl-trunc/down.bin").arguments);
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(bytesAsked(from)).toBeGreaterThanOrEqual(SIZE);
      expect(sha256(readFileSync(join(dir, "dl-trunc", "down.bin")))).toBe(sha256(data));
      expect(existsSync(temp!)).toBe(false);
      expect(hiddenIn("dl-trunc")).toEqual([]);
      expect(keptDownloads(state)).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);

  test("a temp file kept longer than 24 h is removed by the next download, wherever that one goes", async () => {
    const state = tempDir("resume-state");
    const { client, close } = await serveSlow(state);
    try {
      await cutDownload(client, "dl-stale/down.bin");
      expect(hiddenIn("dl-stale")).toHaveLength(1);
      ageRecords(state, "downloads", 25 * 3600 * 1000);
      // A download elsewhere leaves another directory's files alone: a record never sends it outside its own.
      const result = await call(client, "get_object", download("dl-fresh/down.bin").arguments);
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(hiddenIn("dl-stale")).toHaveLength(1);
      expect(keptDownloads(state)).toHaveLength(1);
      // One into that directory removes the expired temp file and its record.
      const there = await call(client, "get_object", download("dl-stale/other.bin").arguments);
      expect(there.isError, textOf(there)).toBeFalsy();
      expect(hiddenIn("dl-stale")).toEqual([]);
      expect(keptDownloads(state)).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);
});
