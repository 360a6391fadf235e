// A reconcile paused mid-way by the handover schedule: right after its k-th
// write it waits, its partition is handed to another instance of the operator,
// and then it is released to finish — a zombie, as Sieve calls a controller
// that goes on writing after it lost its lease. Whether its later writes land
// is the runtime's fencing (the reconcile's signal, aborted when the lease is lost).
import type { ReconcileRecord } from './recording-operator.js';

export class Zombie {
  readonly writesAtPause: number;
  #release: () => void = () => undefined;
  readonly #released = new Promise<void>((resolve) => {
    this.#release = resolve;
  });
  #end: (error: string | undefined) => void = () => undefined;
  /** how its reconcile ended: undefined when it returned, else the error's message */
  readonly ended = new Promise<string | undefined>((resolve) => {
    this.#end = resolve;
  });

  constructor(
    readonly record: ReconcileRecord,
    private readonly signal: AbortSignal,
  ) {
    this.writesAtPause = record.writes.length;
  }

  /** Whether its runtime has fenced it: the reconcile's signal is aborted. */
  get fenced(): boolean {
    return this.signal.aborted;
  }

  /** Whether its runtime fences it within `ms` (its lease lost: the instance notices at its next renewal). */
  fencedWithin(ms: number): Promise<boolean> {
    if (this.signal.aborted) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        resolve(false);
      }, ms);
      timer.unref();
      this.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve(true);
        },
        { once: true },
      );
    });
  }

  /** What the paused reconcile waits on. */
  paused(): Promise<void> {
    return this.#released;
  }

  release(): void {
    this.#release();
  }

  end(error: unknown): void {
    this.#end(error === undefined ? undefined : error instanceof Error ? error.message : 'failed');
  }
}
