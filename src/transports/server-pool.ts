/**
 * MCP servers kept between requests in remote mode. Every HTTP request is
 * answered by an MCP server of its own (the SDK's handler serves one request
 * per server), but building one — its tools, resources, prompts, and for a
 * 2026-07-28 call the JSON form of the called tool's schema — was a sixth of
 * the server's CPU per call. So a server that has answered and closed waits
 * here, idle, for the next request that would build the very same server:
 * the same key (the caller as the policy and scopes see it, and the protocol
 * era) and the same basis (the policy and the storages in force, compared by
 * identity, so a reloaded policy or a caller's new STS credentials build
 * afresh). At most `maxIdle` wait in all; the least recently used go first.
 */
export class ServerPool<S> {
  readonly #idle = new Map<string, { server: S; basis: readonly unknown[] }[]>();
  #count = 0;

  constructor(private readonly maxIdle: number) {}

  /** An idle server built for this key and basis, now the caller's; undefined when none waits. */
  take(key: string, basis: readonly unknown[]): S | undefined {
    const waiting = this.#idle.get(key);
    if (!waiting) return undefined;
    while (waiting.length > 0) {
      const entry = waiting.pop()!;
      this.#count--;
      if (sameBasis(entry.basis, basis)) {
        if (waiting.length === 0) this.#idle.delete(key);
        return entry.server;
      }
    }
    this.#idle.delete(key);
    return undefined;
  }

  /** A server done with its request, kept for the next one with this key and basis. */
  put(key: string, basis: readonly unknown[], server: S): void {
    const waiting = this.#idle.get(key) ?? [];
    // Most recently used last, so the first key is the one to drop from when full.
    this.#idle.delete(key);
    this.#idle.set(key, waiting);
    waiting.push({ server, basis });
    this.#count++;
    while (this.#count > this.maxIdle) {
      const [oldestKey, oldest] = this.#idle.entries().next().value!;
      oldest.shift();
      this.#count--;
      if (oldest.length === 0) this.#idle.delete(oldestKey);
    }
  }

  get size(): number {
    return this.#count;
  }
}

const sameBasis = (a: readonly unknown[], b: readonly unknown[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);
