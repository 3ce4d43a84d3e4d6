import { expect, test } from "bun:test";
import { answerGuard } from "../../../../src/transports/edge/answer-guard.ts";
import type { LegacyQuestions } from "../../../../src/transports/legacy-questions.ts";
import { caller, edgeOf } from "./edge-request.ts";

test("a client's answer to a question asked of it is taken (202); requests pass on", async () => {
  const questions = { answered: (who: string) => who === "label:ci" } as unknown as LegacyQuestions;
  const answer = edgeOf({}, { caller: caller as never, message: { jsonrpc: "2.0", id: "ask-1", result: {} } as never });
  expect((await answerGuard(questions)(answer))?.status).toBe(202);
  const request = edgeOf({}, { caller: caller as never, message: { jsonrpc: "2.0", id: 1, method: "ping" } as never });
  expect(await answerGuard(questions)(request)).toBeUndefined();
});
