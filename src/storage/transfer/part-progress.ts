/**
 * A multipart upload's progress in bytes sent: the parts done, and what the
 * parts in flight have already handed to the connection (sent-bytes.ts), so
 * it moves from the first bytes, not only as parts complete (twelve parts in
 * flight to a far store would say nothing for the first 60 MiB). Only the
 * first part is counted as it goes (upload.ts: part 1 while noneDone): a
 * counted body goes through JS, which made uploads slower with a higher peak
 * when every part, or the whole first round, went that way (the upload shape
 * of the A/B bench, docs/performance.md), and its time is no measure of the
 * store's distance, which the first round's other parts give. After the first
 * round, parts complete one after another. The figure never goes back: a part
 * sent again counts from 0 again, unreported until it passes what was
 * already said.
 */
export class PartProgress {
  readonly #sending = new Map<number, number>();
  #done = 0;
  #inFlight = 0;
  #reported = 0;

  constructor(private readonly onProgress?: (done: number) => void) {}

  /** No part is done yet: parts starting now would show nothing until they end, unless counted as they are sent. */
  get noneDone(): boolean {
    return this.#done === 0;
  }

  /** What part `index` (0-based) reports as its current attempt sends bytes. */
  sentOf(index: number): (sentThisAttempt: number) => void {
    return (bytes) => {
      this.#inFlight += bytes - (this.#sending.get(index) ?? 0);
      this.#sending.set(index, bytes);
      this.#report();
    };
  }

  /** Part `index` is stored (sent now, or kept from before): all its `length` bytes count. */
  partDone(index: number, length: number): void {
    this.#inFlight -= this.#sending.get(index) ?? 0;
    this.#sending.delete(index);
    this.#done += length;
    this.#report();
  }

  #report(): void {
    const now = this.#done + this.#inFlight;
    if (now > this.#reported) this.onProgress?.((this.#reported = now));
  }
}
