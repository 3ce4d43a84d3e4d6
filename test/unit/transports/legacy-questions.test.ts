import { expect, test } from "bun:test";
import { type AnswerRelay, LegacyQuestions } from "../../../src/transports/legacy-questions.ts";

const KEY = new Uint8Array(32).fill(7);

/** Two replicas' relays joined as the state store joins them: what one relays, every one hears. */
function joinedRelays(n: number): AnswerRelay[] {
  const handlers: ((payload: string) => void)[] = [];
  return Array.from({ length: n }, () => ({
    relayAnswer: (payload: string) => {
      for (const h of handlers) h(payload);
    },
    onAnswer: (handler: (payload: string) => void) => void handlers.push(handler),
  }));
}

test("a session id declares elicitation for its own caller only, and only as sealed", () => {
  const questions = new LegacyQuestions(KEY);
  expect(questions.sessionFor("alice", {})).toBeUndefined();
  const session = questions.sessionFor("alice", { elicitation: { form: {} } })!;
  expect(session).toMatch(/^[\x21-\x7e]+$/); // visible ASCII, as the transport spec asks
  expect(questions.declaresElicitation(session, "alice")).toBe(true);
  // Another replica with the same key reads it; another key, another caller, or a touched body does not.
  expect(new LegacyQuestions(KEY).declaresElicitation(session, "alice")).toBe(true);
  expect(new LegacyQuestions(new Uint8Array(32)).declaresElicitation(session, "alice")).toBe(false);
  expect(questions.declaresElicitation(session, "bob")).toBe(false);
  const [body, mac] = session.split(".");
  const forged = Buffer.from(JSON.stringify({ e: 1, n: "x" })).toString("base64url");
  expect(questions.declaresElicitation(`${forged}.${mac}`, "alice")).toBe(false);
  expect(questions.declaresElicitation(`${body}.${mac}.x`, "alice")).toBe(false);
  expect(questions.declaresElicitation(null, "alice")).toBe(false);
  // Two initializes get two session ids.
  expect(questions.sessionFor("alice", { elicitation: {} })).not.toBe(session);
});

test("a session id says whether its client declared tasks: one that declared only tasks gets one too", () => {
  const questions = new LegacyQuestions(KEY);
  const tasksOnly = questions.sessionFor("alice", { tasks: {} })!;
  expect(questions.declared(tasksOnly, "alice")).toEqual({ elicitation: false, tasks: true });
  expect(questions.declared(tasksOnly, "bob")).toEqual({ elicitation: false, tasks: false });
  const both = questions.sessionFor("alice", { tasks: {}, elicitation: {} })!;
  expect(questions.declared(both, "alice")).toEqual({ elicitation: true, tasks: true });
  const asking = questions.sessionFor("alice", { elicitation: {} })!;
  expect(questions.declared(asking, "alice")).toEqual({ elicitation: true, tasks: false });
});

test("an answer reaching another replica is relayed to the one that asked; another caller's is not taken", async () => {
  const [ra, rb] = joinedRelays(2);
  const asking = new LegacyQuestions(KEY, ra);
  const other = new LegacyQuestions(KEY, rb);
  let sent: { id: string; method: string } | undefined;
  const pending = asking
    .askerFor("alice", async (request) => void (sent = request as never))
    .ask({ message: "Delete?" }, new AbortController().signal);
  await Bun.sleep(0);
  expect(sent?.method).toBe("elicitation/create");
  expect(other.answered("bob", { id: sent!.id, result: { action: "accept", content: { confirm: true } } })).toBe(true);
  expect(other.answered("alice", { id: sent!.id, result: { action: "decline" } })).toBe(true);
  expect(await pending).toEqual({ outcome: "answered", result: { action: "decline" } });
  // Not ours: left to the SDK.
  expect(other.answered("alice", { id: 3, result: {} })).toBe(false);
});

test("no stream to ask on is unreachable; a cancelled call's question is unanswered", async () => {
  const questions = new LegacyQuestions(KEY);
  const closed = questions.askerFor("alice", async () => {
    throw new Error("No connection established for request ID: 7");
  });
  expect(await closed.ask({}, new AbortController().signal)).toEqual({ outcome: "unreachable" });
  const cancel = new AbortController();
  const open = questions.askerFor("alice", async () => {}).ask({}, cancel.signal);
  cancel.abort();
  expect(await open).toEqual({ outcome: "unanswered" });
});
