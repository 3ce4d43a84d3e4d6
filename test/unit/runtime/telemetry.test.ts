/** The store-request timing every request goes through: nothing at all when telemetry is off; status, sizes and detail when on. */
import { expect, test } from "bun:test";
import {
  type StoreRequestDetail,
  telemetry,
  timedStoreRequest,
  together,
  useTelemetry,
} from "../../../src/runtime/telemetry.ts";

type Seen = { operation: string; status: number; detail?: StoreRequestDetail };

async function withRecorder(run: (seen: Seen[]) => Promise<void>) {
  const before = telemetry();
  const seen: Seen[] = [];
  useTelemetry(
    together([
      {
        storeRequest: (operation, status, _s, detail) =>
          void seen.push({ operation, status, ...(detail ? { detail } : {}) }),
      },
    ]),
  );
  try {
    await run(seen);
  } finally {
    useTelemetry(before);
  }
}

const answer = { status: 206, length: "2097152" };

test("off: the request is just sent, its detail never built", async () => {
  expect(telemetry().enabled).toBe(false);
  let asked = false;
  const out = await timedStoreRequest(
    "GetObject",
    async () => "body",
    () => answer,
    () => ((asked = true), {}),
  );
  expect(out).toBe("body");
  expect(asked).toBe(false);
});

test("on: the status, the said length and the detail are recorded; a request that fails is status 0", async () => {
  await withRecorder(async (seen) => {
    await timedStoreRequest(
      "GetObject",
      async () => "body",
      () => answer,
      () => ({ bucket: "b", attempt: 2 }),
    );
    await expect(
      timedStoreRequest(
        "PutObject",
        async () => Promise.reject(new Error("reset")),
        () => answer,
        () => ({ bucket: "b", sentBytes: 5 }),
      ),
    ).rejects.toThrow("reset");
    expect(seen).toEqual([
      { operation: "GetObject", status: 206, detail: { bucket: "b", attempt: 2, receivedBytes: 2097152 } },
      { operation: "PutObject", status: 0, detail: { bucket: "b", sentBytes: 5 } },
    ]);
  });
});
