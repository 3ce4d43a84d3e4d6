/** The tool call's steps, each on its own over a small call, and their composition. */
import { describe, expect, test } from "bun:test";
import type { Answer, CallState } from "../../../src/mcp/call/call-state.ts";
import * as steps from "../../../src/mcp/call/call-steps.ts";
import { CALL_STEPS, runTool } from "../../../src/mcp/call/call-steps.ts";
import { compose } from "../../../src/mcp/call/compose.ts";
import { InputNeeded } from "../../../src/mcp/confirmations.ts";
import { ActionableError } from "../../../src/runtime/errors.ts";
import { ByteBudget } from "../../../src/runtime/memory.ts";
import { NO_PROGRESS } from "../../../src/runtime/progress.ts";

const OK: Answer = { content: [{ type: "text", text: "fine" }], structuredContent: { bytes: 3 } };
const refused = (code: string) => new ActionableError({ resource: "r", code, message: "no.", hint: "do x." });

/** A call with only what the steps read; `env` parts as a test needs them. */
function callWith(env: Record<string, unknown> = {}, over: Partial<CallState> = {}): CallState & { audited: string[] } {
  const audited: string[] = [];
  const scope = { info: { name: "default" } };
  const stores = {
    default: scope,
    several: false,
    pick: (name: unknown) => {
      if (name === undefined) return scope;
      if (name === "far") return { info: { name: "far" } };
      throw refused("UnknownStore");
    },
    refusal: () => undefined,
    checkAddresses: () => {},
  };
  const log = { debug() {}, error() {}, info() {}, warn() {} };
  return {
    tool: { name: "get_object", heldBytes: () => 10 } as never,
    env: { stores, log, memory: new ByteBudget(100), caller: "label:ci", ...env } as never,
    given: {},
    args: { bucket_name: "b" },
    storeName: undefined,
    sourceName: undefined,
    request: { mcpReq: { id: 7 } } as never,
    signal: new AbortController().signal,
    progress: NO_PROGRESS,
    canBeJob: false,
    meta: {},
    about: "get_object",
    startedAt: performance.now(),
    span: { run: (work) => work(), end() {} },
    audit: (outcome) => void audited.push(outcome),
    adopted: () => false,
    job: () => undefined,
    scope: scope as never,
    guard: (s) => s,
    audited,
    ...over,
  };
}

describe("compose", () => {
  test("runs the steps in order around the last one, each before and after the rest", async () => {
    const seen: string[] = [];
    const step = (name: string) => async (_c: unknown, next: () => Promise<string>) => {
      seen.push(`${name}>`);
      const r = await next();
      seen.push(`<${name}`);
      return r;
    };
    const run = compose([step("a"), step("b")], async () => (seen.push("last"), "done"));
    expect(await run({})).toBe("done");
    expect(seen).toEqual(["a>", "b>", "last", "<b", "<a"]);
  });

  test("a step that does not call next stops the rest; one that calls it twice is refused", async () => {
    let reached = false;
    expect(await compose([async () => "short"], async () => ((reached = true), "last"))({})).toBe("short");
    expect(reached).toBe(false);
    const twice = compose([async (_c, next) => (await next(), next())], async () => "last");
    await expect(twice({})).rejects.toThrow("twice");
  });
});

describe("the steps", () => {
  test("answerFailures: a refusal is an error result, audited by its code; a question is answered as itself", async () => {
    const call = callWith();
    const r = (await steps.answerFailures(call, () => Promise.reject(refused("AccessDenied")))) as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toContain("AccessDenied");
    expect(call.audited).toEqual(["AccessDenied"]);
    const question = { resultType: "input_required" } as never;
    const asked = callWith();
    expect(await steps.answerFailures(asked, () => Promise.reject(new InputNeeded(question)))).toBe(question);
    expect(asked.audited).toEqual(["InputRequired"]);
    const crashed = callWith();
    const internal = (await steps.answerFailures(crashed, () => Promise.reject(new Error("boom")))) as {
      content: { text: string }[];
    };
    expect(internal.content[0]!.text).toContain("InternalError");
  });

  test("pickStores: the named store and a copy's source; an unknown one is refused before the rest", async () => {
    const call = callWith({}, { storeName: "far", sourceName: undefined });
    await steps.pickStores(call, async () => OK);
    expect(call.scope.info.name).toBe("far");
    let ran = false;
    await expect(
      steps.pickStores(callWith({}, { storeName: "nope" }), async () => ((ran = true), OK)),
    ).rejects.toMatchObject({ code: "UnknownStore" });
    expect(ran).toBe(false);
  });

  test("auditRequired: refused while the audit log cannot be written", async () => {
    const down = callWith({ audit: { refusal: () => refused("AuditUnavailable") } });
    await expect(steps.auditRequired(down, async () => OK)).rejects.toMatchObject({ code: "AuditUnavailable" });
    expect(await steps.auditRequired(callWith({ audit: { refusal: () => undefined } }), async () => OK)).toBe(OK);
  });

  test("storeRefusal and checkAddresses: the store's refusal and the allowlist stop the call", async () => {
    const call = callWith();
    (call.env.stores as unknown as { refusal: () => unknown }).refusal = () => refused("ReadOnly");
    await expect(steps.storeRefusal(call, async () => OK)).rejects.toMatchObject({ code: "ReadOnly" });
    const listed = callWith();
    (listed.env.stores as unknown as { checkAddresses: () => void }).checkAddresses = () => {
      throw refused("BucketNotAllowed");
    };
    await expect(steps.checkAddresses(listed, async () => OK)).rejects.toMatchObject({ code: "BucketNotAllowed" });
  });

  test("callerPolicy: a caller policy guards the stores; without one they are as they are", async () => {
    const none = callWith();
    const before = none.guard;
    await steps.callerPolicy(none, async () => OK);
    expect(none.guard).toBe(before);
  });

  test("admitJob: a call that may become a job is refused while the caller has as many running as allowed", async () => {
    const jobs = {
      admit: async () => {
        throw refused("JobLimit");
      },
    };
    await expect(steps.admitJob(callWith({ jobs }, { canBeJob: true }), async () => OK)).rejects.toMatchObject({
      code: "JobLimit",
    });
    expect(await steps.admitJob(callWith({ jobs }, { canBeJob: false }), async () => OK)).toBe(OK);
  });

  test("reserveMemory: held while the call runs, given back after it (failed too), or handed to the transport's lease", async () => {
    const memory = new ByteBudget(10);
    const call = callWith({ memory });
    await expect(steps.reserveMemory(call, () => Promise.reject(new Error("x")))).rejects.toThrow("x");
    // All 10 bytes are free again: another reservation of 10 is admitted at once.
    (await memory.reserve(10))();
    const held: (string | number)[] = [];
    const leased = callWith({ memory, leases: { hold: (id: string | number) => void held.push(id) } });
    await steps.reserveMemory(leased, async () => OK);
    expect(held).toEqual([7]);
  });

  test("auditSuccess and fitResponse: a success is audited once; an answer too large is refused, never audited ok", async () => {
    const call = callWith();
    await steps.auditSuccess(call, async () => OK);
    expect(call.audited).toEqual(["ok"]);
    const huge: Answer = { content: [{ type: "text", text: "x".repeat(20 * 1024 * 1024) }] };
    const big = callWith();
    await expect(steps.auditSuccess(big, () => steps.fitResponse(big, async () => huge))).rejects.toMatchObject({
      code: "ResponseTooLarge",
    });
    expect(big.audited).toEqual([]);
  });

  test("the whole sequence: a tool's result comes back with the call's meta, audited ok", async () => {
    const tool = {
      name: "get_object",
      handler: async () => ({ content: [{ type: "text", text: "hi" }], structured: { n: 1 } }),
    };
    const call = callWith(
      { calls: { track: (p: Promise<unknown>) => p }, files: {}, confirmWithUser: () => () => "not_asked" },
      { tool: tool as never, meta: { _meta: { m: 1 } } },
    );
    const answer = await compose(CALL_STEPS, runTool)(call);
    expect(answer).toEqual({ content: [{ type: "text", text: "hi" }], structuredContent: { n: 1 }, _meta: { m: 1 } });
    expect(call.audited).toEqual(["ok"]);
  });
});

test("describeCall names the bucket and key a tool's card marks, quoted; never content", async () => {
  const { describeCall } = await import("../../../src/mcp/call/describe-call.ts");
  expect(describeCall("copy_object", { bucket_name: "b", object_key: "a\nb", source_bucket: "s", content: "x" })).toBe(
    'copy_object bucket="b" key="a\\nb"',
  );
  expect(describeCall("download_prefix", { bucket_name: "b", prefix: "logs/" })).toBe(
    'download_prefix bucket="b" prefix="logs/"',
  );
});
