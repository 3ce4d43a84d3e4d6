/**
 * Copies between stores through the compiled binary (one object): streamed or
 * in parts by how near the destination is, each verified, and every way one can
 * fail leaving nothing. Run alone (scripts/test.ts SOLO): a near store is judged
 * by how fast it answers, which a loaded machine skews.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";

import { createHash } from "node:crypto";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { startWanProxy } from "../../scripts/bench/wan-proxy.ts";
import { startFakeS3, xml } from "../helpers/fake-s3.ts";
import { startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes } from "../helpers/files.ts";

import { call, connectBinary, textOf } from "../helpers/mcp.ts";

import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { freshBucket, openUploadsAfterCleanUp, s3, s3Env, sdkClient } from "../helpers/s3.ts";
import {
  copySession,
  md5,
  multipartSource,
  otherClient,
  severalEnv,
  storeBuckets,
  stored,
} from "../helpers/several-stores.ts";

/** A second store named "liar" at `endpoint` (a fake S3 that lies about its bytes; it takes any credentials). */
const liarStore = (endpoint: string) => ({
  STORE_STORES: "liar",
  STORE_LIAR_ENDPOINT_URL: endpoint,
  STORE_LIAR_ACCESS_KEY_ID: "FAKEACCESSKEY0000001",
  STORE_LIAR_SECRET_ACCESS_KEY: "fake-secret-key-000000000000000000000001",
});

let ours: string;
let theirs: string;

/** copy_object of the other store's `key` (in its bucket `theirs`) to `objectKey` in `target`. */
function copyFromOther(client: Parameters<typeof call>[0], key: string, target: string, objectKey = "copy.bin") {
  return call(client, "copy_object", {
    source_store: "other",
    source_bucket: theirs,
    source_key: key,
    bucket_name: target,
    object_key: objectKey,
  });
}
beforeAll(async () => {
  ({ ours, theirs } = await storeBuckets());
});

describe("copies between stores", () => {
  let session: Awaited<ReturnType<typeof connectBinary>>;
  let big: Uint8Array;
  beforeAll(async () => {
    ({ session, big } = await copySession(theirs));
  });
  afterAll(() => session.close());

  test("copy_object with source_store streams another store's object in, verified: a small one whole, a large one as one PUT checked against the source's MD5, type and metadata kept", async () => {
    const small = await copyFromOther(session.client, "note.txt", ours, "from-other/note.txt");
    expect(small.isError, textOf(small)).toBeFalsy();
    expect(textOf(small)).toContain(`other:s3://${theirs}/note.txt`);
    expect(textOf(small)).toContain("streamed between stores and verified");
    expect(new TextDecoder().decode(await stored(ours, "from-other/note.txt"))).toBe("from the other store");
    const large = await copyFromOther(session.client, "big.bin", ours, "from-other/big.bin");
    // A near destination takes the single-part source as one PUT whose Content-MD5 is the source's ETag: the same ETag there.
    expect(large.structuredContent).toMatchObject({ size: big.length, multipart: false, etag: `"${md5(big)}"` });
    expect(md5(await stored(ours, "from-other/big.bin"))).toBe(md5(big));
    const head = await sdkClient().send(new HeadObjectCommand({ Bucket: ours, Key: "from-other/big.bin" }));
    expect([head.ContentType, head.Metadata?.origin]).toEqual(["application/x-test", "other"]);
  });

  test("to a far destination (the WAN model) the same object goes in parts, verified by our own check of the source's MD5", async () => {
    const wan = await startWanProxy(s3().endpoint);
    const far = await connectBinary({ env: severalEnv({ STORE_ENDPOINT_URL: wan.endpoint }) });
    try {
      const r = await copyFromOther(far.client, "big.bin", ours, "from-other/far.bin");
      expect(r.structuredContent, textOf(r)).toMatchObject({ size: big.length, multipart: true });
      expect(md5(await stored(ours, "from-other/far.bin"))).toBe(md5(big));
    } finally {
      await far.close();
      await wan.stop();
    }
  }, 60_000);

  test.each(["other", "ceph"])(
    "a multipart source to a near store goes as streamed parts (no part held here, none with Content-MD5), each checked by its ETag, or signed chunk by chunk where the store checks that (STORE_PROVIDER=%s)",
    async (provider) => {
      const whole = await multipartSource(theirs, "streamed-parts.bin", randomBytes(6 * 1024 * 1024 + 5, 43), 3, {
        ContentType: "application/x-parts",
        Metadata: { origin: "other" },
      });
      const proxy = startRecordingProxy(s3().endpoint);
      const target = await freshBucket("streamparts");
      const session = await connectBinary({
        env: severalEnv({ STORE_ENDPOINT_URL: proxy.endpoint, STORE_PROVIDER: provider }),
      });
      // A key the part requests must encode as the SDK does (path and query both signed).
      const key = "copies/ü dir/a+b&c=d (1).bin";
      try {
        const r = await copyFromOther(session.client, "streamed-parts.bin", target, key);
        expect(r.structuredContent, textOf(r)).toMatchObject({ multipart: true, size: whole.length });
        const parts = proxy.requests.filter((q) => q.method === "PUT" && q.search.includes("partNumber"));
        // 18 MiB in parts of 5 MiB: four, streamed (their MD5 is not known before their bytes): unsigned, their ETags
        // held to our MD5; or, to a store known to check them (Ceph), each 256 KiB signed, checked as it comes.
        const signed = provider === "ceph" ? "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" : "UNSIGNED-PAYLOAD";
        expect(parts.length).toBe(4);
        expect(parts.map((q) => [q.contentMd5, q.payloadHash])).toEqual(parts.map(() => [null, signed]));
      } finally {
        await session.close();
        proxy.stop();
      }
      expect(md5(await stored(target, key))).toBe(md5(whole));
      const head = await sdkClient().send(new HeadObjectCommand({ Bucket: target, Key: key }));
      expect([head.ContentType, head.Metadata?.origin, head.ETag?.endsWith('-4"')]).toEqual([
        "application/x-parts",
        "other",
        true,
      ]);
    },
    60_000,
  );

  test.each(["other", "ceph"])(
    "a streamed part changed on its way (its ETag not the MD5 of the bytes sent, or a chunk not its signature) fails the copy naming the destination and the part: nothing stored, no upload left (STORE_PROVIDER=%s)",
    async (provider) => {
      await multipartSource(theirs, "altered.bin", randomBytes(5 * 1024 * 1024, 44), 3);
      let altered = 0;
      const proxy = startRecordingProxy(s3().endpoint, undefined, undefined, (q, body) => {
        if (q.method !== "PUT" || !q.search.includes("partNumber=2") || altered++ > 0) return body;
        const changed = Uint8Array.from(body);
        changed[1000] = changed[1000]! ^ 0x01;
        return changed;
      });
      const target = await freshBucket("altered");
      const session = await connectBinary({
        env: severalEnv({ STORE_ENDPOINT_URL: proxy.endpoint, STORE_PROVIDER: provider }),
      });
      try {
        const r = await copyFromOther(session.client, "altered.bin", target);
        expect(r.isError, textOf(r)).toBe(true);
        expect(textOf(r)).toStartWith(
          provider === "ceph"
            ? `default:s3://${target}/copy.bin: IntegrityCheckFailed. The store refused the part 2: a chunk of the bytes sent did not match its signature`
            : `default:s3://${target}/copy.bin: IntegrityCheckFailed. The store answered the upload of the part 2 with ETag`,
        );
        expect(altered).toBe(1);
        // The server serves on: the same copy again (nothing altered now) lands.
        const again = await copyFromOther(session.client, "altered.bin", target, "again.bin");
        expect(again.structuredContent, textOf(again)).toMatchObject({ multipart: true });
      } finally {
        await session.close();
        proxy.stop();
      }
      await expect(sdkClient().send(new HeadObjectCommand({ Bucket: target, Key: "copy.bin" }))).rejects.toThrow();
      expect(await openUploadsAfterCleanUp(target)).toEqual([]);
    },
    60_000,
  );

  test.each(["other", "ceph"])(
    "a streamed part the destination fails to take (503, after its body or before it) is sent once more with Content-MD5, its bytes read from the source again: the copy lands (STORE_PROVIDER=%s)",
    async (provider) => {
      const whole = await multipartSource(theirs, "resent.bin", randomBytes(5 * 1024 * 1024, 46), 3);
      for (const unread of [false, true]) {
        let refused = 0;
        const slowDown = () =>
          new Response("<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>", {
            status: 503,
            headers: { "content-type": "application/xml" },
          });
        const proxy = startRecordingProxy(
          s3().endpoint,
          undefined,
          (q) => (q.method === "PUT" && q.search.includes("partNumber=2&") && refused++ === 0 ? slowDown() : undefined),
          undefined,
          unread,
        );
        const target = await freshBucket("resent");
        const session = await connectBinary({
          env: severalEnv({ STORE_ENDPOINT_URL: proxy.endpoint, STORE_PROVIDER: provider }),
        });
        try {
          const r = await copyFromOther(session.client, "resent.bin", target);
          expect(r.structuredContent, textOf(r)).toMatchObject({ multipart: true, size: whole.length });
          const second = proxy.requests.filter((q) => q.method === "PUT" && q.search.includes("partNumber=2&"));
          // Streamed first (no MD5 known before the bytes), then buffered with the MD5 the store checks.
          expect(second.map((q) => q.contentMd5 !== null)).toEqual([false, true]);
        } finally {
          await session.close();
          proxy.stop();
        }
        expect(md5(await stored(target, "copy.bin"))).toBe(md5(whole));
        expect(await openUploadsAfterCleanUp(target)).toEqual([]);
      }
    },
    60_000,
  );

  test.each(["other", "ceph"])(
    "a part sent again whose bytes read from the source again are not those first read (their MD5, or each chunk's SHA-256) fails naming the source: nothing stored, no upload left (STORE_PROVIDER=%s)",
    async (provider) => {
      // A source that serves other bytes when asked again (no real store will): multipart (its ETag no MD5), 15 MiB.
      const fake = await startFakeS3();
      const part = 5 * 1024 * 1024;
      const original = randomBytes(3 * part, 47);
      const changed = Uint8Array.from(original);
      changed[part + 10] = changed[part + 10]! ^ 0xff;
      fake.handle((req) => {
        const headers = {
          etag: '"0123456789abcdef0123456789abcdef-3"',
          "content-type": "application/octet-stream",
          "last-modified": "Mon, 02 Jan 2024 00:00:00 GMT",
        };
        if (req.method === "HEAD") return { headers: { ...headers, "content-length": String(original.length) } };
        const range = req.headers.range?.match(/^bytes=(\d+)-(\d+)?$/);
        if (req.method !== "GET" || !range)
          return { status: 400, body: xml("<Error><Code>InvalidRequest</Code></Error>") };
        const start = Number(range[1]);
        const end = Math.min(Number(range[2] ?? original.length - 1), original.length - 1);
        // The download's ranges start at 0, 2 MiB, 10 MiB; only the part read again starts at 5 MiB.
        const served = start === part ? changed : original;
        return {
          status: 206,
          headers: { ...headers, "content-range": `bytes ${start}-${end}/${original.length}` },
          body: served.subarray(start, end + 1),
        };
      });
      let refused = 0;
      const proxy = startRecordingProxy(s3().endpoint, undefined, (q) =>
        q.method === "PUT" && q.search.includes("partNumber=2&") && refused++ === 0
          ? new Response("<Error><Code>InternalError</Code></Error>", { status: 500 })
          : undefined,
      );
      const target = await freshBucket("reread");
      const liar = liarStore(fake.endpoint);
      const session = await connectBinary({
        env: { ...s3Env(), ...liar, STORE_ENDPOINT_URL: proxy.endpoint, STORE_PROVIDER: provider },
      });
      try {
        const r = await call(session.client, "copy_object", {
          source_store: "liar",
          source_bucket: "src",
          source_key: "big.bin",
          bucket_name: target,
          object_key: "copy.bin",
        });
        expect(r.isError, textOf(r)).toBe(true);
        expect(textOf(r)).toStartWith(
          `liar:s3://src/big.bin: IntegrityCheckFailed. Bytes ${part}-${2 * part - 1} read from the source again`,
        );
        expect(refused).toBe(1);
      } finally {
        await session.close();
        proxy.stop();
        await fake.stop();
      }
      await expect(sdkClient().send(new HeadObjectCommand({ Bucket: target, Key: "copy.bin" }))).rejects.toThrow();
      expect(await openUploadsAfterCleanUp(target)).toEqual([]);
    },
    60_000,
  );

  test("a multipart source cut mid-copy fails naming the source: nothing stored at the destination, no upload left", async () => {
    await multipartSource(theirs, "cut-source.bin", randomBytes(5 * 1024 * 1024, 45), 4);
    const proxy = await startFaultProxy(s3().endpoint);
    const target = await freshBucket("cutsource");
    const session = await connectBinary({ env: severalEnv({ STORE_OTHER_ENDPOINT_URL: proxy.endpoint }) });
    try {
      proxy.set({ kind: "cut", direction: "response", afterBytes: 9 * 1024 * 1024, once: true });
      const r = await copyFromOther(session.client, "cut-source.bin", target);
      expect(r.isError, textOf(r)).toBe(true);
      expect(textOf(r)).toStartWith(`other:s3://${theirs}/cut-source.bin: `);
    } finally {
      await session.close();
      await proxy.stop();
    }
    await expect(sdkClient().send(new HeadObjectCommand({ Bucket: target, Key: "copy.bin" }))).rejects.toThrow();
    expect(await openUploadsAfterCleanUp(target)).toEqual([]);
  }, 60_000);

  test("between two stores that compose part ETags (Ceph both), a multipart source's parts are kept: sent unsigned and unhashed, the copy's ETag the source's", async () => {
    const whole = await multipartSource(theirs, "same-parts.bin", randomBytes(5 * 1024 * 1024, 47), 3);
    const source = await otherClient().send(new HeadObjectCommand({ Bucket: theirs, Key: "same-parts.bin" }));
    const proxy = startRecordingProxy(s3().endpoint);
    const target = await freshBucket("sameparts");
    const session = await connectBinary({
      env: severalEnv({ STORE_ENDPOINT_URL: proxy.endpoint, STORE_PROVIDER: "ceph", STORE_OTHER_PROVIDER: "ceph" }),
    });
    try {
      const r = await copyFromOther(session.client, "same-parts.bin", target);
      expect(r.structuredContent, textOf(r)).toMatchObject({ multipart: true, size: whole.length, etag: source.ETag });
      const parts = proxy.requests.filter((q) => q.method === "PUT" && q.search.includes("partNumber"));
      expect(parts.map((q) => [q.contentMd5, q.payloadHash])).toEqual(parts.map(() => [null, "UNSIGNED-PAYLOAD"]));
      expect(parts.length).toBe(3);
    } finally {
      await session.close();
      proxy.stop();
    }
    expect(md5(await stored(target, "copy.bin"))).toBe(md5(whole));
  }, 60_000);

  test.each(["cut in other parts than inferred", "a byte changed on its way"])(
    "kept parts that do not compose the source's ETag (%s) store nothing: the upload is aborted and the copy made again the checked way",
    async (why) => {
      // 3 parts of 6 MiB + 5 read as 8 MiB parts; 3 of 5 MiB read right, part 2 then altered once by the proxy.
      const wrongLayout = why.startsWith("cut");
      const part = randomBytes(wrongLayout ? 6 * 1024 * 1024 + 5 : 5 * 1024 * 1024, 48);
      const whole = await multipartSource(theirs, "unlike.bin", part, 3);
      let altered = 0;
      const proxy = startRecordingProxy(s3().endpoint, undefined, undefined, (q, body) => {
        if (wrongLayout || q.method !== "PUT" || !q.search.includes("partNumber=2") || altered > 0) return body;
        altered++;
        const changed = Uint8Array.from(body);
        changed[1000] = changed[1000]! ^ 0x01;
        return changed;
      });
      const target = await freshBucket("unlike");
      const session = await connectBinary({
        env: severalEnv({ STORE_ENDPOINT_URL: proxy.endpoint, STORE_PROVIDER: "ceph", STORE_OTHER_PROVIDER: "ceph" }),
      });
      try {
        const r = await copyFromOther(session.client, "unlike.bin", target);
        expect(r.structuredContent, textOf(r)).toMatchObject({ multipart: true, size: whole.length });
        const parts = proxy.requests.filter((q) => q.method === "PUT" && q.search.includes("partNumber"));
        const hashes = parts.map((q) => q.payloadHash);
        // The first upload's parts unsigned (aborted, never completed), then every part signed chunk by chunk.
        const first = hashes.filter((h) => h === "UNSIGNED-PAYLOAD").length;
        expect(first).toBe(3);
        expect(hashes.slice(first)).toEqual(hashes.slice(first).map(() => "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"));
        expect(hashes.length).toBeGreaterThan(first);
        expect(proxy.requests.filter((q) => q.method === "DELETE" && q.search.includes("uploadId")).length).toBe(1);
      } finally {
        await session.close();
        proxy.stop();
      }
      if (!wrongLayout) expect(altered).toBe(1);
      expect(md5(await stored(target, "copy.bin"))).toBe(md5(whole));
      expect(await openUploadsAfterCleanUp(target)).toEqual([]);
    },
    60_000,
  );

  test("a multipart source to a near store whose parts answer slowly (a busy machine) keeps 3 parts in flight, not a far store's 4: streamed or buffered", async () => {
    const key = "mp.bin";
    const part = randomBytes(5 * 1024 * 1024, 41);
    await multipartSource(theirs, key, part, 8);
    // Every part answers 250 ms late (slower than a near store's ~50 MiB/s a connection); the bucket's HEAD does not.
    let inFlight = 0;
    let most = 0;
    const proxy = startRecordingProxy(s3().endpoint, (q) => {
      if (q.method !== "PUT" || !q.search.includes("partNumber")) return undefined;
      most = Math.max(most, ++inFlight);
      return Bun.sleep(250).then(() => void inFlight--);
    });
    const target = await freshBucket("slowparts");
    // Streamed parts (a custom endpoint: the SDK adds no checksums); then parts read into buffers, as where the SDK must
    // add its flexible checksums (AWS; here forced with STORE_CHECKSUMS=when_supported).
    for (const checksums of ["when_required", "when_supported"]) {
      most = 0;
      proxy.requests.length = 0;
      const session = await connectBinary({
        env: severalEnv({ STORE_ENDPOINT_URL: proxy.endpoint, STORE_CHECKSUMS: checksums }),
      });
      try {
        const r = await copyFromOther(session.client, key, target, key);
        expect(r.structuredContent, textOf(r)).toMatchObject({ multipart: true, size: 8 * part.length });
        // At most a near store's 3, never a far store's 4 (a loaded machine may keep fewer in flight at once).
        expect(most).toBeGreaterThanOrEqual(2);
        expect(most).toBeLessThanOrEqual(3);
        const parts = proxy.requests.filter((q) => q.method === "PUT" && q.search.includes("partNumber"));
        expect(parts.map((q) => q.contentMd5 !== null)).toEqual(parts.map(() => checksums === "when_supported"));
      } finally {
        await session.close();
      }
    }
    proxy.stop();
  }, 60_000);

  test("a streamed PUT cut mid-body, or never answered, fails naming the destination, with nothing stored; the server keeps serving", async () => {
    const proxy = await startFaultProxy(s3().endpoint);
    const target = await freshBucket("hang");
    const session = await connectBinary({
      env: severalEnv({
        STORE_ENDPOINT_URL: proxy.endpoint,
        STORE_REQUEST_TIMEOUT_MS: "3000",
        STORE_MAX_ATTEMPTS: "1",
      }),
    });
    const copy = (key: string) => copyFromOther(session.client, "big.bin", target, key);
    try {
      // Near (its answers measured through the proxy): one streamed PUT.
      expect((await copy("first.bin")).structuredContent).toMatchObject({ multipart: false });
      proxy.set({ kind: "cut", direction: "request", afterBytes: 4 * 1024 * 1024, once: true });
      const cut = await copy("cut.bin");
      expect(cut.isError, textOf(cut)).toBe(true);
      expect(textOf(cut)).toStartWith(`default:s3://${target}/cut.bin: `);
      // The whole body taken, no answer: the request timeout after the last byte.
      proxy.set({ kind: "blackhole" });
      const hung = await copy("hung.bin");
      expect(textOf(hung)).toStartWith(
        `default:s3://${target}/hung.bin: Timeout. The destination stopped taking the upload (nothing for 3000 ms)`,
      );
      proxy.set({ kind: "pass" });
      expect((await copy("after.bin")).structuredContent).toMatchObject({ multipart: false, size: big.length });
    } finally {
      await session.close();
      await proxy.stop();
    }
    for (const key of ["cut.bin", "hung.bin"])
      await expect(sdkClient().send(new HeadObjectCommand({ Bucket: target, Key: key }))).rejects.toThrow();
    expect(md5(await stored(target, "after.bin"))).toBe(md5(big));
  }, 60_000);

  test("a source whose bytes are not its ETag's MD5: refused by the destination's check (near, one PUT; a small one, near or far) and by ours (far, in parts); nothing stored, no upload left", async () => {
    // A lying store: its ETag is the MD5 of the object, its bytes have one byte changed (no real store will do that).
    const fake = await startFakeS3();
    const big = randomBytes(13 * 1024 * 1024 + 17, 31);
    const small = randomBytes(100 * 1024 + 3, 32);
    const lie = (bytes: Uint8Array) => {
      const served = Uint8Array.from(bytes);
      served[Math.floor(bytes.length * 0.7)] = served[Math.floor(bytes.length * 0.7)]! ^ 0xff;
      return served;
    };
    const objects = { "/src/big.bin": [big, lie(big)], "/src/small.bin": [small, lie(small)] } as const;
    fake.handle((req) => {
      const [original, served] = objects[req.path as keyof typeof objects] ?? objects["/src/big.bin"];
      const headers = {
        etag: `"${md5(original)}"`,
        "content-type": "application/octet-stream",
        "last-modified": "Mon, 02 Jan 2024 00:00:00 GMT",
      };
      if (req.method === "HEAD") return { headers: { ...headers, "content-length": String(original.length) } };
      const range = req.headers.range?.match(/^bytes=(\d+)-(\d+)?$/);
      if (req.method !== "GET" || !range)
        return { status: 400, body: xml("<Error><Code>InvalidRequest</Code></Error>") };
      const start = Number(range[1]);
      const end = Math.min(Number(range[2] ?? original.length - 1), original.length - 1);
      return {
        status: 206,
        headers: { ...headers, "content-range": `bytes ${start}-${end}/${original.length}` },
        body: served.subarray(start, end + 1),
      };
    });
    const wan = await startWanProxy(s3().endpoint);
    const liar = liarStore(fake.endpoint);
    try {
      for (const [endpoint, key] of [
        [s3().endpoint, "big.bin"],
        [wan.endpoint, "big.bin"],
        [s3().endpoint, "small.bin"],
        [wan.endpoint, "small.bin"],
      ]) {
        const target = await freshBucket("liar");
        const session = await connectBinary({ env: { ...s3Env(), ...liar, STORE_ENDPOINT_URL: endpoint! } });
        try {
          const r = await call(session.client, "copy_object", {
            source_store: "liar",
            source_bucket: "src",
            source_key: key,
            bucket_name: target,
            object_key: "copy.bin",
          });
          expect(r.isError, textOf(r)).toBe(true);
          expect(textOf(r)).toStartWith(`liar:s3://src/${key}: IntegrityCheckFailed`);
          if (endpoint === wan.endpoint && key === "big.bin") expect(textOf(r)).toContain("is not the object's ETag");
          else expect(textOf(r)).toContain("the destination checked them and stored nothing");
        } finally {
          await session.close();
        }
        await expect(sdkClient().send(new HeadObjectCommand({ Bucket: target, Key: "copy.bin" }))).rejects.toThrow();
        expect(await openUploadsAfterCleanUp(target)).toEqual([]);
      }
    } finally {
      await wan.stop();
      await fake.stop();
    }
  }, 90_000);

  test("copy_prefix of small objects, each read whole in one GET: one whose bytes are not its ETag's MD5 refused by the destination, one that breaks its checksum by ours; the honest one copied, nothing else stored", async () => {
    const fake = await startFakeS3();
    const honest = randomBytes(40 * 1024 + 1, 41);
    const lied = randomBytes(30 * 1024 + 5, 42);
    const summed = randomBytes(20 * 1024 + 9, 43);
    const flip = (bytes: Uint8Array) => {
      const served = Uint8Array.from(bytes);
      served[100] = served[100]! ^ 0xff;
      return served;
    };
    const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("base64");
    // Key → what it promises (ETag, and a checksum for one) and what it serves.
    const objects: Record<string, { etag: string; served: Uint8Array; headers?: Record<string, string> }> = {
      "small/honest.bin": { etag: md5(honest), served: honest },
      "small/liar.bin": { etag: md5(lied), served: flip(lied) },
      "small/summed.bin": {
        etag: md5(flip(summed)),
        served: flip(summed),
        headers: { "x-amz-checksum-sha256": sha256(summed) },
      },
    };
    fake.handle((req) => {
      if (req.method === "GET" && req.query.get("list-type") === "2")
        return {
          body: xml(
            `<ListBucketResult><Name>src</Name><Prefix>small/</Prefix><KeyCount>3</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${Object.entries(
              objects,
            )
              .map(
                ([key, o]) =>
                  `<Contents><Key>${key}</Key><LastModified>2026-11-02T00:00:00.000Z</LastModified><ETag>"${o.etag}"</ETag><Size>${o.served.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
              )
              .join("")}</ListBucketResult>`,
          ),
        };
      const object = objects[req.path.replace(/^\/src\//, "")];
      if (req.method !== "GET" || !object || req.headers.range)
        return { status: 400, body: xml("<Error><Code>InvalidRequest</Code></Error>") };
      return {
        headers: { etag: `"${object.etag}"`, "content-type": "application/octet-stream", ...object.headers },
        body: object.served,
      };
    });
    const target = await freshBucket("liar-small");
    const session = await connectBinary({
      env: { ...s3Env(), ...liarStore(fake.endpoint) },
    });
    try {
      const r = await call(session.client, "copy_prefix", {
        source_store: "liar",
        source_bucket: "src",
        source_prefix: "small/",
        bucket_name: target,
        prefix: "copy/",
      });
      const out = r.structuredContent as {
        counts: { done: number; failed: number };
        problems: { name: string; code: string; message: string }[];
      };
      expect(out.counts, textOf(r)).toMatchObject({ done: 1, failed: 2 });
      const failed = Object.fromEntries(out.problems.map((f) => [f.name, f]));
      expect(failed["small/liar.bin"]?.code).toBe("IntegrityCheckFailed");
      expect(failed["small/liar.bin"]?.message).toContain("the destination checked them and stored nothing");
      expect(failed["small/summed.bin"]?.code).toBe("IntegrityCheckFailed");
      expect(failed["small/summed.bin"]?.message).toContain("is not the checksum the store sent");
      // Each object in one GET, no range: read whole into memory.
      const gets = fake.requests.filter((q) => q.method === "GET" && !q.query.has("list-type"));
      expect(gets.map((q) => q.path).sort()).toEqual([
        "/src/small/honest.bin",
        "/src/small/liar.bin",
        "/src/small/summed.bin",
      ]);
      expect(gets.every((q) => q.headers.range === undefined)).toBe(true);
    } finally {
      await session.close();
      await fake.stop();
    }
    expect(md5(await stored(target, "copy/honest.bin"))).toBe(md5(honest));
    for (const key of ["copy/liar.bin", "copy/summed.bin"])
      await expect(sdkClient().send(new HeadObjectCommand({ Bucket: target, Key: key }))).rejects.toThrow();
  }, 60_000);
});
