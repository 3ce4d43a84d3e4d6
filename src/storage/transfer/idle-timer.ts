/** Fails a body that sends nothing for `ms` (a store that stopped), aborting every request of its download. */
export class IdleTimer {
  stalled: Error | undefined;

  constructor(
    private readonly ms: number,
    private readonly stop: AbortController,
  ) {}

  async *guard(body: AsyncIterable<Uint8Array> | undefined): AsyncIterable<Uint8Array> {
    if (!body) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      timer = setTimeout(() => {
        this.stalled ??= Object.assign(new Error(`the store sent nothing for ${this.ms} ms`), { name: "TimeoutError" });
        this.stop.abort(this.stalled);
      }, this.ms);
    };
    try {
      arm();
      for await (const chunk of body) {
        clearTimeout(timer);
        // Not armed while the consumer holds the chunk: a slow disk is not an idle store.
        yield chunk;
        arm();
      }
    } catch (err) {
      throw this.stalled ?? err;
    } finally {
      clearTimeout(timer);
    }
  }
}
