// A counting semaphore: at most `size` holders at once, the rest waiting in
// arrival order. A waiter whose signal aborts leaves the line with the
// signal's reason, and never holds a slot.

export class Slots {
  #held = 0;
  readonly #waiting: { grant: () => void }[] = [];

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`slots: size must be a positive integer, got ${size}`);
  }

  get held(): number {
    return this.#held;
  }

  /** Resolves with the slot's release (call it once) when one is free. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#held < this.size) {
      this.#held++;
      return this.#releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
        const reason: unknown = signal?.reason;
        reject(reason instanceof Error ? reason : new Error(String(reason)));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
    return this.#releaser();
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      // handed on: the slot passes to the next waiter, held stays the same
      if (next === undefined) this.#held--;
      else next.grant();
    };
  }
}
