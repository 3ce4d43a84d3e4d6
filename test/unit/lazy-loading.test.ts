/** The mechanism behind the cold-start figure: initialize + tools/list load no AWS SDK, no mime table. */
import { expect, test } from "bun:test";
import { resolve } from "node:path";

test("answering tools/list loads neither the AWS SDK nor mime-types", () => {
  const out = Bun.spawnSync([process.execPath, resolve(import.meta.dir, "../fixtures/start-and-list.ts")], { stderr: "pipe" });
  expect(out.stderr.toString()).toBe("");
  const loaded = JSON.parse(out.stdout.toString());
  expect(loaded).toEqual({ tools: 20, awsSdk: 0, smithy: 0, mimeTypes: 0 });
});

test("the check can fail: importing the storage client does load the SDK", () => {
  const script = 'await import("@aws-sdk/client-s3"); process.stdout.write(String(Object.keys(require.cache).filter((k) => k.includes("/@aws-sdk/")).length));';
  const out = Bun.spawnSync([process.execPath, "-e", script], { cwd: resolve(import.meta.dir, "../..") });
  expect(Number(out.stdout.toString())).toBeGreaterThan(0);
});
