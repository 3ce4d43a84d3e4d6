/**
 * A 2026-07-28 confirmation belongs to the caller it was asked of
 * (hardening, fourth round), through the compiled binary in remote mode
 * with two callers: the question goes out with a requestState sealed to the
 * question and the caller; alice's accepted answer, replayed in bob's
 * request with her state, deletes nothing (the state is refused), and an
 * answer with no state is asked again. Alice's own retry deletes.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ANSWERS } from "../helpers/elicitation.ts";
import { type HttpBinary, startHttpBinary } from "../helpers/http.ts";
import { freshBucket, keysUnder, s3Env, sdkClient } from "../helpers/s3.ts";

const ALICE = "replay-alice-token-0123456789ab";
const BOB = "replay-bob-token-0123456789abcd";
let bucket: string;
let server: HttpBinary;

type Pending = {
  resultType?: string;
  inputRequests?: Record<string, unknown>;
  requestState?: string;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

async function manualClient(token: string): Promise<Client> {
  const client = new Client({ name: "replay", version: "1" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } } as never,
    capabilities: { elicitation: { form: {} } },
    inputRequired: { autoFulfill: false },
  } as never);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const deleteCall = (extra: Record<string, unknown> = {}) => ({
  name: "delete_objects",
  arguments: { bucket_name: bucket, prefix: "r/", confirm: true },
  ...extra,
});

beforeAll(async () => {
  bucket = await freshBucket("replay");
  await sdkClient().send(new PutObjectCommand({ Bucket: bucket, Key: "r/1.txt", Body: "1" }));
  server = await startHttpBinary({
    env: { ...s3Env(), STORE_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}` },
    args: ["--allow-delete"],
  });
}, 60_000);
afterAll(() => server?.stop());

test("alice's answer replayed in bob's request deletes nothing; without its state it is asked again; alice's own retry deletes", async () => {
  const alice = await manualClient(ALICE);
  const bob = await manualClient(BOB);
  try {
    const asked = (await alice.callTool(deleteCall(), { allowInputRequired: true } as never)) as unknown as Pending;
    const [key] = Object.keys(asked.inputRequests ?? {});
    expect(key).toBeDefined();
    expect(asked.requestState).toBeString();
    const answer = { inputResponses: { [key!]: ANSWERS.accept } };
    // Bob replays alice's answer and her state: refused, nothing deleted.
    const replayed = await bob
      .callTool(deleteCall({ ...answer, requestState: asked.requestState }), { allowInputRequired: true } as never)
      .then(
        (r) => r as unknown as Pending,
        (err: Error) => ({ isError: true, error: err.message }) as Pending & { error: string },
      );
    expect(JSON.stringify(replayed)).not.toContain('"applied":true');
    expect(await keysUnder(bucket, "r/")).toEqual(["r/1.txt"]);
    // An answer with no state: asked again, nothing deleted.
    const stateless = (await bob.callTool(deleteCall(answer), {
      allowInputRequired: true,
    } as never)) as unknown as Pending;
    expect(Object.keys(stateless.inputRequests ?? {})).toEqual([key!]);
    expect(await keysUnder(bucket, "r/")).toEqual(["r/1.txt"]);
    // Alice's own retry, with her state: applied.
    const done = (await alice.callTool(deleteCall({ ...answer, requestState: asked.requestState }), {
      allowInputRequired: true,
    } as never)) as unknown as Pending;
    expect(done.structuredContent, JSON.stringify(done)).toMatchObject({
      confirmation: "accepted",
      applied: true,
      deleted_count: 1,
    });
    expect(await keysUnder(bucket, "r/")).toEqual([]);
  } finally {
    await alice.close();
    await bob.close();
  }
}, 60_000);
