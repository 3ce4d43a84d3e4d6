/**
 * Jobs shared by every replica through the state store (--state-url, Redis 6+
 * or Valkey), so job_status, cancel_job and list_jobs answer the same
 * wherever the proxy sends them. Each job's record (its view, owner, the
 * tool and arguments it was called with, and once ended its answer) is a key
 * kept an hour after the job ends; a caller's jobs are a sorted set; the
 * replica running a job keeps a short-lived "alive" key for it, renewed with
 * each progress write (every second), so a job whose replica died (crash,
 * kill, OOM) is seen as interrupted within seconds. One pub/sub channel
 * carries "ended" (wakes every job_status waiting on it, no polling) and
 * "cancel" (reaches the replica running it within a round trip), and
 * "policy" (a replica read a changed policy: every other reads it too and
 * judges its running jobs by it), and "answer" (a 2025 client's answer to a
 * question another replica asked: legacy-questions.ts).
 *
 * While the store does not answer, writes are dropped (the next write of a
 * running job carries everything again; an ended job's is retried once a
 * second until it lands) and reads fail with StateStoreUnavailable: the job
 * itself keeps running.
 */
import { randomBytes } from "node:crypto";
import type { RedisClient } from "bun";
import type { JobShare, SharedJob } from "../mcp/jobs/jobs.ts";
import { ActionableError } from "../runtime/errors.ts";
import type { Logger } from "../runtime/log.ts";
import type { AnswerRelay } from "./legacy-questions.ts";

const CHANNEL = "smcp:jobs";
/** How long a running job's replica is believed alive without a word from it. */
const ALIVE_MS = 6_000;
/** A running job's record outlives a silent replica this long (then it is gone, as an ended job's after its hour). */
const RUNNING_KEPT_MS = 2 * 60 * 60 * 1000;
const ANSWER_MS = 2_000;

export class SharedJobs implements JobShare, AnswerRelay {
  readonly replica = randomBytes(6).toString("base64url");
  readonly #client: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #waiting = new Map<string, Set<() => void>>();
  #onCancel: (id: string) => void = () => {};
  #onPolicy: () => void = () => {};
  #onAnswer: (payload: string) => void = () => {};
  /** Ended records not yet written (the store was away), retried once a second. */
  readonly #unwritten = new Map<string, SharedJob>();
  readonly #inFlight = new Set<Promise<unknown>>();
  #retry: ReturnType<typeof setInterval> | undefined;

  constructor(
    url: string,
    private readonly keptMs: number,
    private readonly log: Logger,
  ) {
    this.#client = new Bun.RedisClient(url, {
      connectionTimeout: 2_000,
      autoReconnect: true,
      enableOfflineQueue: false,
    });
    this.#subscriber = new Bun.RedisClient(url, { connectionTimeout: 2_000, autoReconnect: true });
    this.#client.connect().catch(() => {});
    this.#subscriber
      .subscribe(CHANNEL, (message: string) => this.#heard(message))
      .catch((err: unknown) =>
        this.log.warn(
          `state store (--state-url): cannot listen for job events (${(err as Error)?.message ?? err}); job_status waits by polling the store`,
        ),
      );
  }

  save(job: SharedJob): void {
    const running = job.view.state === "running";
    const key = `smcp:job:${job.view.id}`;
    const writes = [
      this.#client.send("SET", [key, JSON.stringify(job), "PX", String(running ? RUNNING_KEPT_MS : this.keptMs)]),
      ...(running
        ? [this.#client.send("SET", [`${key}:alive`, this.replica, "PX", String(ALIVE_MS)])]
        : [this.#client.send("DEL", [`${key}:alive`])]),
      this.#client.send("ZADD", [`smcp:jobs:${job.owner}`, String(Date.parse(job.view.started_at)), job.view.id]),
      this.#client.send("PEXPIRE", [`smcp:jobs:${job.owner}`, String(RUNNING_KEPT_MS)]),
    ];
    const written = Promise.all(writes).then(
      () => {
        this.#unwritten.delete(job.view.id);
        if (!running)
          void this.#client.send("PUBLISH", [CHANNEL, JSON.stringify({ ended: job.view.id })]).catch(() => {});
      },
      () => {
        // A running job's next write carries it all again; an ended one is kept to retry.
        if (!running) this.#keepForLater(job);
      },
    );
    this.#inFlight.add(written);
    void written.finally(() => this.#inFlight.delete(written));
  }

  /** Waits up to `ms` for the writes under way (a stopping replica's last words about its jobs). */
  async flush(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled([...this.#inFlight]),
      new Promise((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
    clearTimeout(timer);
  }

  async load(id: string): Promise<SharedJob | undefined> {
    const [record, alive] = (await this.#ask(() =>
      Promise.all([this.#client.get(`smcp:job:${id}`), this.#client.get(`smcp:job:${id}:alive`)]),
    )) as [string | null, string | null];
    if (!record) return undefined;
    const job = JSON.parse(record) as SharedJob;
    return { ...job, alive: alive !== null };
  }

  async listOf(owner: string, max: number): Promise<SharedJob[]> {
    const ids = (await this.#ask(() =>
      this.#client.send("ZREVRANGE", [`smcp:jobs:${owner}`, "0", String(max - 1)]),
    )) as string[];
    if (ids.length === 0) return [];
    const found = (await this.#ask(() =>
      this.#client.send("MGET", [...ids.map((id) => `smcp:job:${id}`), ...ids.map((id) => `smcp:job:${id}:alive`)]),
    )) as (string | null)[];
    return ids.flatMap((_, i) =>
      found[i] ? [{ ...(JSON.parse(found[i]!) as SharedJob), alive: found[ids.length + i] !== null }] : [],
    );
  }

  async cancel(id: string): Promise<void> {
    await this.#ask(() => this.#client.send("PUBLISH", [CHANNEL, JSON.stringify({ cancel: id })]));
  }

  ended(id: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let set = this.#waiting.get(id);
      if (!set) this.#waiting.set(id, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        set!.delete(done);
        if (set!.size === 0) this.#waiting.delete(id);
        resolve();
      };
      // Woken by the "ended" event; a replica that dies says nothing, so a waiter looks again at least every ALIVE_MS.
      const timer = setTimeout(done, Math.min(ms, ALIVE_MS));
      signal.addEventListener("abort", done, { once: true });
      set.add(done);
    });
  }

  onCancel(handler: (id: string) => void): void {
    this.#onCancel = handler;
  }

  drop(id: string, owner: string): void {
    this.#unwritten.delete(id);
    void Promise.all([
      this.#client.send("DEL", [`smcp:job:${id}`, `smcp:job:${id}:alive`]),
      this.#client.send("ZREM", [`smcp:jobs:${owner}`, id]),
    ]).catch(() => {});
  }

  /** Tells every other replica that the policy changed (each reads its policy again and judges its running jobs). */
  policyChanged(): void {
    void this.#client.send("PUBLISH", [CHANNEL, JSON.stringify({ policy: this.replica })]).catch(() => {});
  }

  /** Told when another replica's policy changed. */
  onPolicy(handler: () => void): void {
    this.#onPolicy = handler;
  }

  /** Hands a client's answer to every replica: the one whose question it answers takes it. */
  relayAnswer(payload: string): void {
    void this.#client.send("PUBLISH", [CHANNEL, JSON.stringify({ answer: payload })]).catch(() => {});
  }

  onAnswer(handler: (payload: string) => void): void {
    this.#onAnswer = handler;
  }

  close(): void {
    clearInterval(this.#retry);
    this.#client.close();
    this.#subscriber.close();
  }

  #heard(message: string): void {
    let event: { ended?: string; cancel?: string; policy?: string; answer?: string };
    try {
      event = JSON.parse(message);
    } catch {
      return;
    }
    if (event.cancel) this.#onCancel(event.cancel);
    if (typeof event.answer === "string") this.#onAnswer(event.answer);
    if (event.policy && event.policy !== this.replica) this.#onPolicy();
    if (event.ended) for (const wake of [...(this.#waiting.get(event.ended) ?? [])]) wake();
  }

  #keepForLater(job: SharedJob): void {
    this.#unwritten.set(job.view.id, job);
    this.#retry ??= setInterval(() => {
      if (this.#unwritten.size === 0) {
        clearInterval(this.#retry);
        this.#retry = undefined;
        return;
      }
      if (!this.#client.connected) this.#client.connect().catch(() => {});
      for (const pending of this.#unwritten.values()) this.save(pending);
    }, 1_000);
  }

  /** A read from the store, or StateStoreUnavailable. */
  async #ask<T>(read: () => Promise<T>): Promise<T> {
    if (!this.#client.connected) this.#client.connect().catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const late = new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_MS} ms`)), ANSWER_MS)),
      );
      const work = read();
      work.catch(() => {});
      return await Promise.race([work, late]);
    } catch (err) {
      throw new ActionableError({
        resource: "state store",
        code: "StateStoreUnavailable",
        message: `The state store (--state-url) that the replicas share jobs through does not answer (${(err as Error)?.message ?? err}). The job itself keeps running on its replica.`,
        hint: "retry in a few seconds; if it persists, the operator should check the Redis/Valkey behind --state-url.",
      });
    } finally {
      clearTimeout(timer);
    }
  }
}
