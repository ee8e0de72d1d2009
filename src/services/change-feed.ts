/**
 * The ids of what changed, for one subscriber that re-reads each from the database: an id that changes
 * again before it is read is read once, and batches are taken at most once per `intervalMs`, so a
 * campaign that changes a thousand times a second costs its subscriber a few reads a second. Handed to
 * GraphQL as the subscription's source stream; `return()` (the client left) ends a pending `next()` at
 * once, which an async generator could not do.
 */
export class ChangeFeed implements AsyncIterableIterator<string> {
  /** Changed since the last batch was taken. */
  readonly #pending = new Set<string>();
  /** Taken, not yet handed out. */
  readonly #batch = new Set<string>();
  #takenAt = -Infinity;
  #done = false;
  #wake: (() => void) | undefined;
  #onClose: () => void = () => {};

  constructor(private readonly intervalMs: number) {}

  /** Records changed ids; safe to call at any rate. */
  add(ids: Iterable<string>): void {
    const idle = this.#pending.size === 0;
    for (const id of ids) if (!this.#batch.has(id)) this.#pending.add(id);
    if (idle && this.#pending.size > 0) this.#wake?.();
  }

  /** Runs once when the feed ends. */
  onClose(close: () => void): void {
    this.#onClose = close;
  }

  async next(): Promise<IteratorResult<string>> {
    while (!this.#done && this.#batch.size === 0) {
      const waitMs = this.#pending.size === 0 ? Infinity : this.#takenAt + this.intervalMs - performance.now();
      if (waitMs <= 0) {
        for (const id of this.#pending) this.#batch.add(id);
        this.#pending.clear();
        this.#takenAt = performance.now();
      } else {
        await this.#sleep(waitMs);
      }
    }
    if (this.#done) return { done: true, value: undefined };
    const id = this.#batch.values().next().value!;
    this.#batch.delete(id);
    return { done: false, value: id };
  }

  async return(): Promise<IteratorResult<string>> {
    if (!this.#done) {
      this.#done = true;
      this.#onClose();
      this.#wake?.();
    }
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Until `ms` have passed (Infinity: until an id arrives), or the feed ends. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(() => this.#wake?.(), ms) : undefined;
      this.#wake = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
    });
  }
}
