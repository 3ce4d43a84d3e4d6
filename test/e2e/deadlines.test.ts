/**
 * Every tool call that is not a streaming transfer obeys the operation
 * deadline (STORE_OPERATION_TIMEOUT_MS), against a store that trickles its
 * answers (which keeps any idle timer happy) or never answers: the list
 * below is every such tool, and the server keeps serving afterwards.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type FakeS3, fakeEnv, listObjectsXml, startFakeS3 } from "../helpers/fake-s3.ts";
import { call, connectBinary, textOf } from "../helpers/mcp.ts";

let fake: FakeS3;
let session: Awaited<ReturnType<typeof connectBinary>>;
const DEADLINE_MS = 2_000;

beforeAll(async () => {
  fake = await startFakeS3();
  session = await connectBinary({
    env: fakeEnv(fake, { STORE_OPERATION_TIMEOUT_MS: String(DEADLINE_MS) }),
    args: ["--allow-delete"],
  });
});
afterAll(async () => {
  await session.close();
  await fake.stop();
});

const slowBody = listObjectsXml(
  "b",
  Array.from({ length: 200 }, (_, i) => `k${i}`),
);
const object = { bucket_name: "b", object_key: "k.txt" };
const NOT_TRANSFERS: [string, Record<string, unknown>][] = [
  ["list_buckets", {}],
  ["list_objects", { bucket_name: "b" }],
  ["list_object_versions", { bucket_name: "b" }],
  ["head_object", object],
  ["get_object", object],
  ["put_object", { ...object, content: "x" }],
  ["copy_object", { source_bucket: "b", source_key: "src.txt", ...object }],
  ["create_bucket", { bucket_name: "new-bucket" }],
  ["delete_bucket", { bucket_name: "b" }],
  ["delete_object", object],
  ["delete_objects", { bucket_name: "b", keys: ["a", "b"], confirm: true }],
];

for (const store of ["trickles", "never answers"] as const) {
  test(`every tool that is not a transfer ends at the operation deadline when the store ${store}`, async () => {
    // HEAD has no body to trickle: it never answers either way.
    fake.handle((req) =>
      store === "never answers" || req.method === "HEAD"
        ? { silent: true }
        : { headers: { "content-type": "application/xml" }, body: slowBody, trickle: { bytes: 8, everyMs: 150 } },
    );
    const offered = new Set((await session.client.listTools()).tools.map((t) => t.name));
    for (const [name] of NOT_TRANSFERS) expect(offered.has(name), name).toBe(true);
    const outcomes = await Promise.all(
      NOT_TRANSFERS.map(async ([name, args]) => {
        const started = performance.now();
        const r = await call(session.client, name, args);
        return { name, ms: performance.now() - started, isError: r.isError, text: textOf(r) };
      }),
    );
    for (const o of outcomes) {
      expect(o.isError, o.name).toBe(true);
      expect(o.text, o.name).toContain("Timeout");
      expect(o.text, o.name).toContain("STORE_OPERATION_TIMEOUT_MS");
      // Several requests in a row each get the deadline (copy: HEAD, then COPY); far from a hang either way.
      expect(o.ms, o.name).toBeLessThan(4 * DEADLINE_MS + 5_000);
    }
    fake.handle(() => ({ body: listObjectsXml("b", ["alive"]) }));
    expect((await call(session.client, "list_objects", { bucket_name: "b" })).structuredContent!.objects[0].key).toBe(
      "alive",
    );
  }, 60_000);
}
