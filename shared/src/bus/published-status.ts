// What this process last published as an object's status intent, so a
// re-reconcile that comes to the same status does not publish it again — and
// so cost the status writer a run that writes nothing. Memory alone never
// decides: an intent is left out only while the object's status, as the
// reconciler read it, shows either that intent in place or the status it
// showed when the first intent of a run of them went out, or one of the
// run's earlier intents in place (nobody else has written it since, and the
// writer applies the latest intent per object). A status anyone else
// changed is published over again, and so repaired — with one bounded
// exception: a status set back to exactly what it was before the intent,
// within ttlMs of it, waits for the object's next reconcile.
import { isDeepStrictEqual } from 'node:util';
import { desiredStatus, sameStatus, statusInPlace } from './status-in-place.js';

interface Intent {
  readonly generation: number;
  readonly status: Record<string, unknown>;
}

interface Published extends Intent {
  /**
   * the object's status when the first intent of this run went out; unknown
   * for an intent handed down from the partition's previous owner until the
   * status is first read (whatever it is then, the pending intent is newer)
   */
  before: Record<string, unknown> | undefined;
  /** the run's earlier intents, the last one last: the writer may have applied any of them */
  readonly earlier: readonly Intent[];
  readonly at: number;
}

/** Earlier intents kept per object: more before the bus shows one is unheard of. */
const EARLIER = 8;

export interface PublishedStatusOptions {
  /** how long a memo is trusted: a lost, parked or undone intent is published again after it */
  readonly ttlMs?: number;
  readonly capacity?: number;
  readonly now?: () => number;
}

/** The status this process' pending intent makes, or `older`: the object read is from before it. */
export type OwnStatus = Record<string, unknown> | 'older';

export interface StatusCandidate {
  readonly uid: string;
  readonly observedGeneration: number;
  readonly status: Record<string, unknown>;
}

export class PublishedStatus {
  readonly #published = new Map<string, Published>();
  readonly #ttlMs: number;
  readonly #capacity: number;
  readonly #now: () => number;

  constructor(options: PublishedStatusOptions = {}) {
    this.#ttlMs = options.ttlMs ?? 10_000;
    this.#capacity = options.capacity ?? 20_000;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Whether publishing `intent` would ask for nothing new, given the object's
   * status as the reconciler read it (`current`).
   */
  redundant(intent: StatusCandidate, current: Record<string, unknown>): boolean {
    const last = this.#published.get(intent.uid);
    // a different word from the last one sent, however old: that one may still be
    // pending (a writer backlogged past the memo's life), and the latest must win
    if (last !== undefined && !sameStatus(intent.status, last.status)) return false;
    const fresh =
      last !== undefined &&
      last.generation === intent.observedGeneration &&
      this.#now() - last.at < this.#ttlMs;
    if (last !== undefined && !fresh) this.#published.delete(intent.uid);
    if (statusInPlace(desiredStatus(intent, current), current)) return true; // the writer would skip it
    // pending (or applied, not yet seen): nobody else has written the status since
    return fresh && ours(last, current);
  }

  /**
   * Read-your-own-writes for the status (ADR 0019): what the object's status
   * is once the intent this process last published for it is written. `older`
   * when the object read is of an earlier generation than that intent (a
   * record from before what this process already reconciled); the intent's
   * status while the status read is still the one the run of intents went out
   * over, or an earlier intent of it in place (nobody else wrote it since, the
   * memo fresh, the generation the same or later); undefined when the status
   * read already shows it, or nothing of this process' is pending.
   */
  own(object: {
    readonly uid: string;
    readonly generation: number;
    readonly status: Record<string, unknown>;
  }): OwnStatus | undefined {
    const last = this.#published.get(object.uid);
    if (last === undefined || this.#now() - last.at >= this.#ttlMs) return undefined;
    if (object.generation < last.generation) return 'older';
    // a later generation too: its spec is new, but the latest word on the status is still the intent
    if (!ours(last, object.status)) return undefined;
    const desired = desiredStatus(
      { status: last.status, observedGeneration: last.generation },
      object.status,
    );
    return statusInPlace(desired, object.status) ? undefined : { ...object.status, ...desired };
  }

  /** Remembers an intent as published. */
  published(intent: StatusCandidate, current: Record<string, unknown>): void {
    const last = this.#published.get(intent.uid);
    // published over the run's own statuses: the run goes on
    const goesOn = last !== undefined && this.#now() - last.at < this.#ttlMs && ours(last, current);
    this.#published.delete(intent.uid); // re-insert: the map's order is the LRU order
    this.#published.set(intent.uid, {
      generation: intent.observedGeneration,
      status: intent.status,
      before: goesOn ? last.before : current,
      earlier: goesOn
        ? [...last.earlier, { generation: last.generation, status: last.status }].slice(-EARLIER)
        : [],
      at: this.#now(),
    });
    if (this.#published.size > this.#capacity) {
      const oldest = this.#published.keys().next().value;
      if (oldest !== undefined) this.#published.delete(oldest);
    }
  }

  /**
   * An intent still pending in the status stream when this process took the
   * object's partition (whoever published it): the latest word on the
   * object's status, remembered as if published now. The same intent as the
   * memo's keeps the run it belongs to; another replaces the memo, and the
   * status first read is the one it goes out over.
   */
  inherit(intent: StatusCandidate): void {
    const last = this.#published.get(intent.uid);
    const same =
      last !== undefined &&
      last.generation === intent.observedGeneration &&
      sameStatus(last.status, intent.status);
    this.#published.delete(intent.uid);
    this.#published.set(
      intent.uid,
      same
        ? { ...last, at: this.#now() }
        : {
            generation: intent.observedGeneration,
            status: intent.status,
            before: undefined,
            earlier: [],
            at: this.#now(),
          },
    );
    if (this.#published.size > this.#capacity) {
      const oldest = this.#published.keys().next().value;
      if (oldest !== undefined) this.#published.delete(oldest);
    }
  }

  /** After a failed publish: nothing is known to be on its way. */
  forget(uid: string): void {
    this.#published.delete(uid);
  }
}

/** The status is the one the run went out over, or shows one of its earlier intents in place. */
function ours(run: Published, status: Record<string, unknown>): boolean {
  // handed down: the first status read is the one the pending intent goes out over
  run.before ??= status;
  return (
    isDeepStrictEqual(status, run.before) ||
    run.earlier.some((intent) =>
      statusInPlace(
        desiredStatus({ status: intent.status, observedGeneration: intent.generation }, status),
        status,
      ),
    )
  );
}
