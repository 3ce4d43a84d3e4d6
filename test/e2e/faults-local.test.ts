/**
 * Faults on the client's side of the binary and in credentials: a full disk,
 * stdin closed mid-transfer, a cancel that must get no answer, bad keys and
 * tokens. Each through the compiled binary.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { startFaultProxy } from "../helpers/fault-proxy.ts";
import { randomBytes, tempDir } from "../helpers/files.ts";
import { call, connectBinary, requireBinary, textOf } from "../helpers/mcp.ts";
import { INITIALIZE, INITIALIZED } from "../helpers/raw-stdio.ts";
import { freshBucket, s3, s3Env, sdkClient } from "../helpers/s3.ts";

const MiB = 1024 * 1024;
let bucket: string;
let dir: string;

beforeAll(async () => {
  bucket = await freshBucket("local-faults");
  dir = tempDir("local-faults");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "eight.bin", Body: randomBytes(8 * MiB, 7) }));
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "huge.bin", Body: randomBytes(96 * MiB, 8) }));
  writeFileSync(join(dir, "huge.bin"), randomBytes(96 * MiB, 9));
}, 120_000);

/** Lines a raw client reads from the binary, with a way to wait for one. */
/** The binary on raw stdio; no state directory: a cut transfer is cleaned up here (kept to resume: resume.test.ts). */
function rawBinary(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([requireBinary(), ...args], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    env: { PATH: process.env.PATH ?? "", ...s3Env(), STORE_STATE_DIR: "off", ...env },
  });
  const lines: string[] = [];
  void (async () => {
    let buffer = "";
    for await (const chunk of proc.stdout) {
      buffer += new TextDecoder().decode(chunk);
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        lines.push(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
      }
    }
  })();
  const send = (...messages: object[]) => {
    for (const m of messages) proc.stdin.write(`${JSON.stringify(m)}\n`);
    proc.stdin.flush();
  };
  const answerTo = async (id: number, timeoutMs = 30_000) => {
    for (const end = Date.now() + timeoutMs; Date.now() < end; await Bun.sleep(20)) {
      const line = lines.find((l) => JSON.parse(l).id === id);
      if (line) return JSON.parse(line);
    }
    throw new Error(`no answer to request ${id}`);
  };
  return { proc, lines, send, answerTo };
}

const toolCall = (id: number, name: string, args: object) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

describe("a full disk during a download", () => {
  const mount = join(tempDir("tmpfs"), "small");
  beforeAll(() => {
    mkdirSync(mount);
    const out = spawnSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mount]);
    if (out.status !== 0)
      throw new Error(`cannot mount a 2 MiB tmpfs for the disk-full test (run as root): ${out.stderr}`);
  });
  afterAll(() => {
    spawnSync("umount", [mount]);
  });

  test("LocalDiskFull, nothing partial, the existing file untouched", async () => {
    writeFileSync(join(mount, "keep.txt"), "the user's file\n");
    const { client, close } = await connectBinary({ env: s3Env(), args: ["--allowed-dir", mount] });
    try {
      const fresh = await call(client, "get_object", {
        bucket_name: bucket,
        object_key: "eight.bin",
        mode: "download",
        local_path: "new.bin",
      });
      expect(fresh.isError).toBe(true);
      expect(textOf(fresh)).toContain("LocalDiskFull");
      expect(textOf(fresh)).toContain("new.bin");
      const over = await call(client, "get_object", {
        bucket_name: bucket,
        object_key: "eight.bin",
        mode: "download",
        local_path: "keep.txt",
        overwrite: true,
      });
      expect(over.isError).toBe(true);
      expect(readdirSync(mount)).toEqual(["keep.txt"]);
      expect(readFileSync(join(mount, "keep.txt"), "utf8")).toBe("the user's file\n");
      // The space came back: a small read still works.
      expect((await call(client, "list_buckets")).isError).toBeFalsy();
    } finally {
      await close();
    }
  });
});

describe("the client goes away or changes its mind", () => {
  test("stdin closed during a download: exit 0, nothing partial", async () => {
    const { proc, send } = rawBinary(["--allowed-dir", dir]);
    send(
      INITIALIZE,
      INITIALIZED,
      toolCall(2, "get_object", {
        bucket_name: bucket,
        object_key: "huge.bin",
        mode: "download",
        local_path: "stdin-dl/huge.bin",
      }),
    );
    await Bun.sleep(300);
    proc.stdin.end();
    expect(await proc.exited).toBe(0);
    const left = readdirSync(dir).includes("stdin-dl") ? readdirSync(join(dir, "stdin-dl")) : [];
    // Either it finished before stdin closed (the whole file) or nothing is there.
    expect(left.filter((f) => f !== "huge.bin")).toEqual([]);
    if (left.includes("huge.bin")) expect(statSync(join(dir, "stdin-dl/huge.bin")).size).toBe(96 * MiB);
  }, 60_000);

  test("stdin closed during a multipart upload: exit 0, no object, no multipart upload", async () => {
    const { proc, send } = rawBinary(["--allowed-dir", dir]);
    send(
      INITIALIZE,
      INITIALIZED,
      toolCall(2, "upload_file", { local_file_path: "huge.bin", bucket_name: bucket, object_key: "stdin-up.bin" }),
    );
    await Bun.sleep(400);
    proc.stdin.end();
    expect(await proc.exited).toBe(0);
    const uploads = (await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
    expect(uploads).toEqual([]);
    const objects =
      (await sdkClient().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "stdin-up" }))).Contents ?? [];
    expect(objects).toEqual([]);
  }, 60_000);

  for (const kind of ["download", "upload"] as const) {
    test(`notifications/cancelled mid-${kind}: no answer to that request, clean-up within a second, the next request answered`, async () => {
      // Throttled to 16 MiB/s a connection, so the transfer is surely still running when the cancel comes.
      const proxy = await startFaultProxy(s3().endpoint);
      proxy.set({ kind: "throttle", bytesPerSecond: 16 * MiB });
      const { proc, lines, send, answerTo } = rawBinary(["--allowed-dir", dir], { STORE_ENDPOINT_URL: proxy.endpoint });
      try {
        send(INITIALIZE, INITIALIZED);
        await answerTo(1);
        const args =
          kind === "download"
            ? { bucket_name: bucket, object_key: "huge.bin", mode: "download", local_path: "cancel-raw/huge.bin" }
            : { local_file_path: "huge.bin", bucket_name: bucket, object_key: "cancel-raw.bin" };
        send(toolCall(2, kind === "download" ? "get_object" : "upload_file", args));
        // Cancel only once the work is visibly under way: a temp file, or a multipart upload.
        await waitUntil(
          async () =>
            kind === "download" ? leftIn("cancel-raw").length > 0 : (await uploadsFor("cancel-raw.bin")) > 0,
          5000,
        );
        await Bun.sleep(200);
        send({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: 2, reason: "the user stopped it" },
        });
        const cancelledAt = Date.now();
        await waitUntil(
          async () =>
            kind === "download" ? leftIn("cancel-raw").length === 0 : (await uploadsFor("cancel-raw.bin")) === 0,
          1000,
        );
        expect(Date.now() - cancelledAt).toBeLessThanOrEqual(1500);
        send({ jsonrpc: "2.0", id: 3, method: "ping" });
        await answerTo(3);
        await Bun.sleep(500);
        expect(lines.filter((l) => JSON.parse(l).id === 2)).toEqual([]);
      } finally {
        proc.stdin.end();
        await proc.exited;
        await proxy.stop();
      }
    }, 60_000);
  }
});

function leftIn(sub: string): string[] {
  return readdirSync(dir).includes(sub) ? readdirSync(join(dir, sub)) : [];
}

async function uploadsFor(key: string): Promise<number> {
  const uploads = (await sdkClient().send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
  const objects = (await sdkClient().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key }))).Contents ?? [];
  return uploads.filter((u) => u.Key === key).length + objects.length;
}

/** Polls until `done` holds; throws after `withinMs` plus a grace for a loaded machine. */
async function waitUntil(done: () => Promise<boolean> | boolean, withinMs: number): Promise<void> {
  const end = Date.now() + withinMs + 500;
  while (!(await done())) {
    if (Date.now() > end) throw new Error(`not done within ${withinMs} ms`);
    await Bun.sleep(50);
  }
}

describe("credentials the store refuses", () => {
  test("an unknown access key id: InvalidAccessKeyId, telling the user what to fix", async () => {
    const { client, close } = await connectBinary({ env: { ...s3Env(), STORE_ACCESS_KEY_ID: "AKIDUNKNOWN0000" } });
    try {
      const r = await call(client, "list_buckets");
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("InvalidAccessKeyId");
      expect(textOf(r)).toContain("STORE_ACCESS_KEY_ID");
      expect(textOf(r)).not.toContain(s3().secretAccessKey);
    } finally {
      await close();
    }
  });

  test("a wrong secret: SignatureDoesNotMatch, naming STORE_SECRET_ACCESS_KEY", async () => {
    const { client, close } = await connectBinary({
      env: { ...s3Env(), STORE_SECRET_ACCESS_KEY: "not-the-secret-at-all" },
    });
    try {
      const r = await call(client, "list_objects", { bucket_name: bucket });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("SignatureDoesNotMatch");
      expect(textOf(r)).toContain("STORE_SECRET_ACCESS_KEY");
      expect(textOf(r)).not.toContain("not-the-secret-at-all");
    } finally {
      await close();
    }
  });

  test("an expired session token: ExpiredToken, telling the user to refresh it (AWS's answer, injected: Ceph has no STS here)", async () => {
    const proxy = await startFaultProxy(s3().endpoint);
    proxy.set({ kind: "http-error", status: 400, code: "ExpiredToken", count: 100 });
    const { client, close } = await connectBinary({
      env: { ...s3Env(), STORE_ENDPOINT_URL: proxy.endpoint, STORE_SESSION_TOKEN: "FwoGZXIvYXdzEXPIRED" },
    });
    try {
      const r = await call(client, "list_buckets");
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("ExpiredToken");
      expect(textOf(r)).toContain("STORE_SESSION_TOKEN");
      expect(textOf(r)).not.toContain("FwoGZXIvYXdzEXPIRED");
      // A 400 is not retried.
      expect(proxy.stats.errorsAnswered).toBe(1);
    } finally {
      await close();
      await proxy.stop();
    }
  });
});
