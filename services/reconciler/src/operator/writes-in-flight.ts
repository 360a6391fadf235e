// The writes a reconcile's ctx started that have not settled yet. A reconcile
// ends with them, whether it returned or threw: after a failed Promise.all (one
// write refused while its siblings are still on the wire) those siblings would
// otherwise land while the retry already runs, and a retry that reads the world
// before they land repeats what they did (a marker not yet there: an Event
// posted twice). One reconcile per object at a time then holds for its writes
// too, as it does in controller-runtime, whose Reconcile returns when its calls do.
export class WritesInFlight {
  readonly #pending = new Set<Promise<unknown>>();

  /** Tracks a write until it settles; returns it unchanged. */
  track<T>(write: Promise<T>): Promise<T> {
    this.#pending.add(write);
    const forget = () => {
      this.#pending.delete(write);
    };
    write.then(forget, forget);
    return write;
  }

  get size(): number {
    return this.#pending.size;
  }

  /**
   * Resolves once every write tracked so far has settled, and any that their
   * continuations started meanwhile: after each round, the microtasks that
   * settling queued run (an immediate comes after them) before it looks again.
   */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) {
      await Promise.allSettled([...this.#pending]);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
