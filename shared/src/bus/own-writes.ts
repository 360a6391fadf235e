// Read-your-own-writes (ADR 0019): what this process last wrote of each
// object, so a read from the bus that answers an older revision is caught.
// resourceVersions are opaque: a recorded revision is compared with a written
// one only for equality, and "older" is decided by the bus' own order — the
// stream sequence of the event that carried the written revision, once it
// has been seen. Before that, a recorded revision that is neither the written
// one nor known to come after it is "unknown", and the reader looks for the
// written one in the stream (object-reader.ts).
import { keyString, type ObjectKey } from '../runtime/object-key.js';

/** What a read from the bus found for one object (undefined: no record at all). */
export interface RecordedRevision {
  /** the event's sequence in KUBEBUS_EVENTS */
  readonly seq: number;
  readonly uid: string;
  readonly resourceVersion: string;
}

interface OwnWrite {
  uid: string;
  resourceVersion: string;
  /** the apiserver path of the object: what a fall-back GET asks for */
  readonly path: string;
  /** the sequence of the last record read before the write: the written revision comes after it */
  after: number;
  /** the sequence of the event that carried the written revision, once seen */
  seen?: number;
  /** the record's sequence when a read last had to ask the apiserver: the bus is still behind */
  fellBackAt?: number;
}

/** fresh: not older than the own write; stale: older; unknown: ask the stream */
export type Freshness = 'fresh' | 'stale' | 'unknown';

export type StaleReadOutcome =
  /** the own write was on the bus, a later revision of someone else's after it: one stream read */
  | 'superseded'
  /** the bus was behind the own write; the reader waited until it had it */
  | 'waited'
  /** the bus did not catch up in time: the object was read from the apiserver */
  | 'fell_back'
  /** nor could the apiserver answer: the record as it was */
  | 'unavailable'
  /** the primary's status was from before this process' own pending status intent: the reconcile saw the intent's */
  | 'own_status';

export class OwnWrites {
  readonly #writes = new Map<string, OwnWrite>();
  /** the sequence of the last record read per object: where a write's event is looked for after */
  readonly #lastRead = new Map<string, number>();

  constructor(private readonly capacity = 50_000) {}

  /** A read answered `seq` for the object (kept to know where a following write's event comes after). */
  read(key: ObjectKey, seq: number): void {
    bounded(this.#lastRead, keyString(key), seq, this.capacity);
  }

  /** This process wrote the object and the apiserver answered `written`. */
  wrote(
    key: ObjectKey,
    written: { readonly metadata: { readonly uid: string; readonly resourceVersion: string } },
    path: string,
  ): void {
    const id = keyString(key);
    bounded(
      this.#writes,
      id,
      {
        uid: written.metadata.uid,
        resourceVersion: written.metadata.resourceVersion,
        path,
        after: this.#lastRead.get(id) ?? 0,
      },
      this.capacity,
    );
  }

  /** Whether `recorded` (what the bus answered) is at least the own last write of the object. */
  freshness(key: ObjectKey, recorded: RecordedRevision | undefined): Freshness {
    const own = this.#writes.get(keyString(key));
    if (own === undefined) return 'fresh';
    if (own.seen !== undefined)
      return recorded !== undefined && recorded.seq >= own.seen ? 'fresh' : 'stale';
    if (recorded === undefined) return 'stale';
    if (recorded.uid === own.uid && recorded.resourceVersion === own.resourceVersion) {
      own.seen = recorded.seq;
      return 'fresh';
    }
    // nothing recorded since the read before the write: the write is not there yet
    return recorded.seq <= own.after ? 'stale' : 'unknown';
  }

  /** Where to look for the own write in the stream, and how to recognise it; undefined when there is none. */
  pending(key: ObjectKey): PendingWrite | undefined {
    const own = this.#writes.get(keyString(key));
    if (own === undefined) return undefined;
    return {
      from: own.seen ?? own.after + 1,
      path: own.path,
      ...(own.fellBackAt === undefined ? {} : { fellBackAt: own.fellBackAt }),
      reached: (revision) => {
        if (own.seen !== undefined) return revision.seq >= own.seen;
        if (revision.uid !== own.uid || revision.resourceVersion !== own.resourceVersion)
          return false;
        own.seen = revision.seq;
        return true;
      },
      fellBack: (seq) => {
        own.fellBackAt = seq;
      },
      answered: (current, seq) => {
        // the apiserver's answer is at least the own write: the bus need catch up
        // only to it from now on, not to a revision it may never carry (a relist
        // publishes only the latest, an aged-out record is gone for good)
        if (current === undefined) {
          this.#writes.delete(keyString(key));
          return;
        }
        own.uid = current.metadata.uid;
        own.resourceVersion = current.metadata.resourceVersion;
        own.after = seq;
        delete own.seen;
        own.fellBackAt = seq;
      },
    };
  }
}

export interface PendingWrite {
  /** the first stream sequence that may carry it */
  readonly from: number;
  readonly path: string;
  /** the record's sequence when a read last fell back for it */
  readonly fellBackAt?: number;
  /** whether this recorded revision is the own write or comes after it (remembers where it was) */
  reached(revision: RecordedRevision): boolean;
  /** a read fell back to the apiserver while the bus' record was at `seq` */
  fellBack(seq: number): void;
  /** the apiserver answered `current` (undefined: gone) while the bus' record was at `seq` */
  answered(
    current:
      { readonly metadata: { readonly uid: string; readonly resourceVersion: string } } | undefined,
    seq: number,
  ): void;
}

/** Sets a key, most recent last; the oldest goes when the map is full. */
function bounded<V>(map: Map<string, V>, key: string, value: V, capacity: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > capacity) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
}
