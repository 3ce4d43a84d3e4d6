/**
 * Questions to the user over 2025 Streamable HTTP, which this server serves
 * statelessly: the question goes out on the call's own SSE stream, and the
 * client's answer comes back in a POST of its own that a load balancer may
 * send to any replica.
 *
 * - Who may be asked: a 2025 client declares elicitation in its initialize,
 *   which reaches one replica. That answer carries an Mcp-Session-Id holding
 *   the declaration, sealed (HMAC, the replicas' shared key) to the caller;
 *   the client sends it with every later request, so every replica knows it
 *   may ask and none keeps a session. A session id another caller presents,
 *   or one that does not verify, declares nothing.
 * - Asking: an elicitation/create with an id no other question has (random),
 *   so the answer finds its question whichever replica it reaches.
 * - The answer: taken by the replica that asked; one that reaches another
 *   replica is relayed through the shared state store (--state-url). Without
 *   a store it is taken only where it was asked (one replica, or sticky
 *   sessions). A question left unanswered for QUESTION_WAIT_MS is cancelled.
 * Only the asking caller's answer counts: a relayed or local answer from
 * another caller is ignored.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { LegacyAnswer, LegacyAsk } from "../mcp/confirmations.ts";

/** How long a question waits for the user: the SDK's own wait for a client's answer (60 s), as over stdio. */
export const QUESTION_WAIT_MS = 60_000;
/** An answer larger than this is no answer to a one-checkbox form, and is not relayed. */
const MAX_ANSWER_BYTES = 16 * 1024;
const ID_PREFIX = "ask-";

/** What relays an answer to the replica that asked: the shared state store's pub/sub (shared-jobs.ts). */
export interface AnswerRelay {
  relayAnswer(payload: string): void;
  onAnswer(handler: (payload: string) => void): void;
}

/** A JSON-RPC response as a client POSTs it. */
export interface ClientResponse {
  id?: string | number | null;
  result?: unknown;
  error?: unknown;
}

type Waiting = { caller: string; settle: (answer: LegacyAnswer) => void };

export class LegacyQuestions {
  readonly #waiting = new Map<string, Waiting>();

  constructor(
    private readonly key: Uint8Array,
    private readonly relay?: AnswerRelay,
  ) {
    relay?.onAnswer((payload) => this.#heard(payload));
  }

  /**
   * The Mcp-Session-Id for a 2025 initialize: only a client that declared elicitation or tasks gets one (nothing else
   * needs it). It says which, so that every replica asks such a client, and lists the tools that take tasks for it.
   */
  sessionFor(caller: string, capabilities: unknown): string | undefined {
    const declared = capabilities as { elicitation?: unknown; tasks?: unknown } | undefined;
    const e = declared?.elicitation !== undefined && declared.elicitation !== null ? 1 : 0;
    const t = declared?.tasks !== undefined && declared.tasks !== null ? 1 : 0;
    if (!e && !t) return undefined;
    const body = Buffer.from(JSON.stringify({ e, t, n: randomBytes(9).toString("base64url") })).toString("base64url");
    return `${body}.${this.#seal(caller, body)}`;
  }

  /** What the request's session id, verified for this caller, declares: nothing for one that does not verify. */
  declared(sessionId: string | null, caller: string): { elicitation: boolean; tasks: boolean } {
    const none = { elicitation: false, tasks: false };
    const [body, mac, extra] = (sessionId ?? "").split(".");
    if (!body || !mac || extra !== undefined) return none;
    const expected = Buffer.from(this.#seal(caller, body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return none;
    try {
      const said = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
      return { elicitation: said.e === 1, tasks: said.t === 1 };
    } catch {
      return none;
    }
  }

  /** Whether the request's session id, verified for this caller, declares elicitation. */
  declaresElicitation(sessionId: string | null, caller: string): boolean {
    return this.declared(sessionId, caller).elicitation;
  }

  /** How one call of `caller` asks: `send` writes a request on the call's own stream (it throws once that is closed). */
  askerFor(caller: string, send: (request: object) => Promise<void>): LegacyAsk {
    return {
      ask: async (params, signal) => {
        const id = `${ID_PREFIX}${randomBytes(12).toString("base64url")}`;
        const answer = new Promise<LegacyAnswer>((resolve) => {
          const settle = (a: LegacyAnswer) => {
            clearTimeout(timer);
            signal.removeEventListener("abort", gone);
            this.#waiting.delete(id);
            resolve(a);
          };
          const gone = () => settle({ outcome: "unanswered" });
          const timer = setTimeout(gone, QUESTION_WAIT_MS);
          signal.addEventListener("abort", gone, { once: true });
          this.#waiting.set(id, { caller, settle });
        });
        try {
          await send({ jsonrpc: "2.0", id, method: "elicitation/create", params });
        } catch {
          // The call's stream has been answered (a job's question): nobody can be asked.
          this.#waiting.get(id)?.settle({ outcome: "unreachable" });
        }
        return answer;
      },
    };
  }

  /**
   * A client's JSON-RPC response: true when it answers a question of this server's (taken here, or relayed to the
   * replica that asked), false when it is none of ours (the SDK's).
   */
  answered(caller: string, message: ClientResponse): boolean {
    if (typeof message.id !== "string" || !message.id.startsWith(ID_PREFIX)) return false;
    if (this.#take(caller, message)) return true;
    const payload = JSON.stringify({ caller, id: message.id, result: message.result, error: message.error });
    if (payload.length <= MAX_ANSWER_BYTES) this.relay?.relayAnswer(payload);
    return true;
  }

  #heard(payload: string): void {
    try {
      const { caller, ...message } = JSON.parse(payload) as ClientResponse & { caller: string };
      this.#take(caller, message);
    } catch {}
  }

  /** Settles the question this answers, if it waits here for this caller. */
  #take(caller: string, message: ClientResponse): boolean {
    const waiting = this.#waiting.get(String(message.id));
    if (!waiting || waiting.caller !== caller) return false;
    waiting.settle(
      message.result !== undefined && message.result !== null
        ? { outcome: "answered", result: message.result as never }
        : { outcome: "unanswered" },
    );
    return true;
  }

  #seal(caller: string, body: string): string {
    return createHmac("sha256", this.key).update(`legacy-session\0${caller}\0${body}`).digest("base64url");
  }
}
