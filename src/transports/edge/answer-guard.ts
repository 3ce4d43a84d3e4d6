/** A 2025 client's answer to a question a call asked it (legacy-questions.ts): taken here or relayed to the asker, 202. */
import type { ClientResponse, LegacyQuestions } from "../legacy-questions.ts";
import type { Guard } from "./guard.ts";

export function answerGuard(questions: LegacyQuestions): Guard {
  return (edge) => {
    const { message, caller } = edge;
    if (!message || message.method !== undefined || !questions.answered(caller!.id, message as ClientResponse))
      return undefined;
    edge.note("answer", caller!.id);
    return new Response(null, { status: 202, headers: edge.cors });
  };
}
