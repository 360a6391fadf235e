// Status intents handed to the status writer of the same process (ADR 0028).
// When `kubebus run` hosts the reconciler and the status writer together, an
// intent is written inside the reconcile that produced it, before its work
// mark is acked: a crash before the write redelivers the mark, so nothing is
// lost, and no intent crosses the bus. Only what the writer here cannot write
// (throttled, an error) goes on KUBEBUS_STATUS, where the partitioned writers
// retry or park it as before.
//
// Order: an object's intent pending on the bus is older than anything this
// process publishes now; written here first, it would be applied after — a
// regression. So an object with an intent that may be pending on the bus gets
// its next ones on the bus too, until the bus shows none pending for it.
import type { StatusIntent } from './status-intent.js';

/** What keeps a zombie reconcile from writing (ADR 0005): checked right before the write. */
export interface WriteGuard {
  /** throws when the reconcile may no longer write (its partition's lease lost) */
  readonly fence: () => void;
  /** the reconcile's own: aborted, the write is too */
  readonly signal: AbortSignal;
  /**
   * Told when the write waits on the status writer's own pool: the intent is
   * the reconcile's last word, and its worker may take the next object (the
   * work mark stays unacked until the write is done).
   */
  readonly releaseWorker?: () => void;
}

/** The status writer of this process, as the reconciler's publisher sees it. */
export interface InProcessStatusWriter {
  /** Judges and writes (or skips) the intent now; false when it could not: it goes on the bus. */
  write(intent: StatusIntent, guard?: WriteGuard): Promise<boolean>;
}

/** Objects tracked by uid; past it, every object's bus is checked before a write here (one get). */
const TRACKED_MAX = 10_000;

/**
 * Which objects may have an intent pending on the bus, by uid. An object not
 * tracked has none from this process since it started, nor one it inherited
 * when it took the object's partition (status-intent.ts' `inherit`). Past
 * `max` tracked objects, every object counts as possibly pending for the
 * rest of the process's life: none is forgotten while it might be pending.
 */
export class IntentsOnTheBus {
  readonly #tracked = new Set<string>();
  #overflowed = false;

  constructor(private readonly max = TRACKED_MAX) {}

  /** An intent of the object went on the bus (published, or found pending there). */
  added(uid: string): void {
    if (this.#tracked.size >= this.max) this.#overflowed = true;
    else this.#tracked.add(uid);
  }

  /** What is pending on the bus could not be read: every object counts as possibly pending. */
  lostTrack(): void {
    this.#overflowed = true;
  }

  /** The bus was checked and holds no intent of the object. */
  cleared(uid: string): void {
    this.#tracked.delete(uid);
  }

  /** Whether the bus must be checked before an intent of the object is written here. */
  mayBePending(uid: string): boolean {
    return this.#overflowed || this.#tracked.has(uid);
  }
}
