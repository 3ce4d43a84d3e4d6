/**
 * The first answers of a stdio session, given before the MCP SDK is loaded.
 *
 * An MCP client starts the server, sends `initialize` and asks for the tool
 * list, and a host starting many servers waits for every list. Both answers
 * are fixed by the configuration (offer.ts: name, version, instructions,
 * capabilities; tool-list.ts: the list built into the binary), while the SDK
 * costs most of a start before it can answer anything (its modules, then the
 * protocol's schemas, built on the first request). So this transport, in
 * front of the stdio one, answers a 2025 `initialize` and the `tools/list`
 * after it itself, queues every message, and asks for the SDK (`sdkNeeded`)
 * once the list is answered, a message it cannot answer arrives, or nothing
 * arrives for a moment. When the SDK connects, the queue is replayed to it in
 * order, so its state is exactly as if it had answered: its own answers to
 * the two requests are compared with ours (a difference is reported, which
 * the tests treat as a failure) and dropped.
 *
 * Anything else — a 2026-07-28 first request, `server/discover`, a malformed
 * `initialize`, a paged tools/list — goes to the SDK unanswered.
 */
import type { JSONRPCMessage, Transport, TransportSendOptions } from "@modelcontextprotocol/server";

/**
 * The protocol versions the SDK (2.4) agrees to in `initialize`, newest first:
 * a client asking for one gets it, any other gets the first (test/e2e/early-answers.test.ts checks this against the SDK).
 */
export const HANDSHAKE_VERSIONS: readonly string[] = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];
/** The _meta key that makes a request a 2026-07-28 one. */
const PROTOCOL_CLAIM = "io.modelcontextprotocol/protocolVersion";
/** How long to wait for the next message the SDK is not needed for, before loading it anyway. */
const IDLE_MS = 50;

export interface EarlyFacts {
  serverInfo: { name: string; version: string };
  instructions: string;
  capabilities: Record<string, unknown>;
  /** The tools/list answer's tools. */
  tools: unknown[];
  /** The same, saying which take tasks: for a client that declared tasks (2025-11-25), where tasks are served. */
  taskTools?: unknown[];
}

type Id = string | number;
type Request = { jsonrpc: "2.0"; id?: Id; method?: string; params?: Record<string, unknown> };

export class EarlyAnswers implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** Resolves when the SDK should be loaded. */
  readonly sdkNeeded: Promise<void>;
  #needSdk!: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Where the session is: nothing yet, `initialize` answered here, or over to the SDK. */
  #phase: "opening" | "initialized" | "sdk" = "opening";
  #handedOver = false;
  #queued: JSONRPCMessage[] = [];
  /** Whether the client declared tasks in its initialize (then tools/list says which tools take them). */
  #clientTasks = false;
  /** What was answered here, by request id: the SDK's own answers to these are compared, then dropped. */
  readonly #answered = new Map<Id, { method: string; result: unknown }>();

  constructor(
    private readonly inner: Transport,
    private readonly facts: EarlyFacts,
    /** Told when the SDK's answer differs from the one given here (a bug: the two must agree). */
    private readonly differed: (method: string, ours: string, sdk: string) => void,
  ) {
    this.sdkNeeded = new Promise((resolve) => (this.#needSdk = resolve));
    inner.onmessage = (message) => this.#receive(message as JSONRPCMessage);
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
  }

  /** Starts reading, before the SDK is there. */
  async listen(): Promise<void> {
    await this.inner.start();
    this.#idle();
  }

  /** The SDK connects: it gets every message so far, in order, then the rest as they come. */
  async start(): Promise<void> {
    this.#toSdk();
    this.#handedOver = true;
    const queued = this.#queued;
    this.#queued = [];
    for (const message of queued) this.onmessage?.(message);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const id = (message as { id?: Id }).id;
    const early = id === undefined ? undefined : this.#answered.get(id);
    if (early && ("result" in message || "error" in message)) {
      this.#answered.delete(id!);
      const [ours, sdk] = [
        canonical(early.result),
        canonical("result" in message ? message.result : { error: message.error }),
      ];
      if (ours !== sdk) this.differed(early.method, ours, sdk);
      return;
    }
    return this.inner.send(message, options);
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    await this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  #receive(message: JSONRPCMessage): void {
    if (this.#handedOver) return this.onmessage?.(message);
    this.#queued.push(message);
    if (this.#phase === "sdk") return;
    const request = message as Request;
    const params = request.params;
    const claimsModern =
      params?._meta !== undefined &&
      typeof params._meta === "object" &&
      params._meta !== null &&
      PROTOCOL_CLAIM in params._meta;
    if (claimsModern) return this.#toSdk();
    if (
      this.#phase === "opening" &&
      request.method === "initialize" &&
      request.id !== undefined &&
      isHandshake(params)
    ) {
      const requested = params!.protocolVersion as string;
      const protocolVersion = HANDSHAKE_VERSIONS.includes(requested) ? requested : HANDSHAKE_VERSIONS[0]!;
      const capabilities = params!.capabilities as Record<string, unknown> | undefined;
      this.#clientTasks = typeof capabilities?.tasks === "object" && capabilities.tasks !== null;
      this.#answer(request.id, "initialize", {
        protocolVersion,
        capabilities: this.facts.capabilities,
        serverInfo: this.facts.serverInfo,
        instructions: this.facts.instructions,
      });
      this.#phase = "initialized";
      return this.#idle();
    }
    if (this.#phase === "initialized" && request.method === "notifications/initialized") return this.#idle();
    if (
      this.#phase === "initialized" &&
      request.method === "tools/list" &&
      request.id !== undefined &&
      params?.cursor === undefined
    ) {
      this.#answer(request.id, "tools/list", {
        tools: (this.#clientTasks && this.facts.taskTools) || this.facts.tools,
      });
      return this.#toSdk();
    }
    this.#toSdk();
  }

  #answer(id: Id, method: string, result: Record<string, unknown>): void {
    this.#answered.set(id, { method, result });
    void this.inner.send({ jsonrpc: "2.0", id, result } as JSONRPCMessage);
  }

  /** Nothing more to answer here: load the SDK. */
  #toSdk(): void {
    clearTimeout(this.#timer);
    this.#phase = "sdk";
    this.#needSdk();
  }

  #idle(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#toSdk(), IDLE_MS);
  }
}

/** An `initialize` the SDK accepts as it stands (else it answers it, with its error). */
function isHandshake(params: Record<string, unknown> | undefined): boolean {
  const info = params?.clientInfo as Record<string, unknown> | undefined;
  return (
    typeof params?.protocolVersion === "string" &&
    typeof params.capabilities === "object" &&
    params.capabilities !== null &&
    typeof info?.name === "string" &&
    typeof info.version === "string"
  );
}

/** JSON with sorted keys, for comparing two answers. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}
