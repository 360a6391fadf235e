// The calls a reconcile's ctx started (writes and the reads between them) that
// have not settled yet. A reconcile ends with them, whether it returned or
// threw: after a failed Promise.all (one write refused while its siblings are
// still on the wire) those siblings would otherwise land while the retry
// already runs, and a retry that reads the world before they land repeats what
// they did (a marker not yet there: an Event posted twice). One reconcile per
// object at a time then holds for its calls too, as it does in
// controller-runtime, whose Reconcile returns when its calls do. ADR 0030.

/** How long a reconcile's end waits for its calls still running: an HTTP request's own timeout. */
export const CALLS_BOUND_MS = 30_000;

export class InFlightCalls {
  readonly #pending = new Set<Promise<unknown>>();

  /**
   * Tracks a call until it settles. The caller gets a promise that settles as
   * the call does, after it is forgotten here; a rejection nobody handles stays
   * unhandled, as it was without tracking.
   */
  track<T>(call: Promise<T>): Promise<T> {
    this.#pending.add(call);
    return call.finally(() => {
      this.#pending.delete(call);
    });
  }

  get size(): number {
    return this.#pending.size;
  }

  /**
   * Resolves once every call tracked so far has settled, and any that their
   * continuations started meanwhile: after each round, the microtasks that
   * settling queued run (an immediate comes after them) before it looks again.
   * Gives up when `signal` aborts (the process stops, the partition moved) or
   * after `boundMs`, saying which.
   */
  async settled(
    options: { signal?: AbortSignal; boundMs?: number } = {},
  ): Promise<'settled' | 'aborted' | 'overdue'> {
    const deadline = performance.now() + (options.boundMs ?? CALLS_BOUND_MS);
    while (this.#pending.size > 0) {
      if (options.signal?.aborted === true) return 'aborted';
      const left = deadline - performance.now();
      if (left <= 0) return 'overdue';
      const stop = stopAfter(left, options.signal);
      const outcome = await Promise.race([
        Promise.allSettled([...this.#pending]).then(() => 'settled' as const),
        stop.reached,
      ]);
      stop.cancel();
      if (outcome !== 'settled') return outcome;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return 'settled';
  }
}

/** `call()`, settled only once the calls it started have settled too (or the wait gave up). */
export async function endingWith<T>(
  calls: InFlightCalls,
  call: () => Promise<T>,
  options: {
    readonly signal?: AbortSignal;
    readonly boundMs?: number;
    /** told when the wait gave up with calls still running */
    readonly onUnsettled?: (reason: 'aborted' | 'overdue', running: number) => void;
  } = {},
): Promise<T> {
  const wait = async () => {
    const outcome = await calls.settled(options);
    if (outcome !== 'settled') options.onUnsettled?.(outcome, calls.size);
  };
  let result: T;
  try {
    result = await call();
  } catch (error) {
    // a call that threw may have continuations queued that are about to start more
    await new Promise((resolve) => setImmediate(resolve));
    await wait();
    throw error;
  }
  await wait();
  return result;
}

function stopAfter(ms: number, signal: AbortSignal | undefined) {
  let cancel = () => {};
  const reached = new Promise<'aborted' | 'overdue'>((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve('aborted');
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve('overdue');
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    cancel = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
  });
  return { reached, cancel };
}
