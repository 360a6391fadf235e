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
  /** the record is the object's deletion, or shows it going (a deletionTimestamp) */
  readonly gone?: boolean;
}

interface OwnWrite {
  /** the own write deleted the object (uid): only its deletion, or a later object, is fresh */
  deleted?: true;
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

/**
 * One own write as handed down to the next owner of its primary (a restart, a
 * partition hand-over): carried in the reconcile's outcome record
 * (handed-down-writes.ts).
 */
export interface HandedDownWrite {
  readonly key: ObjectKey;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly path: string;
  readonly after: number;
  readonly deleted?: true | undefined;
}

/**
 * Own writes journaled per primary until its outcome record: more than an
 * outcome record carries (outcomes.ts), the most recent kept.
 */
const JOURNALED_PER_PRIMARY = 64;

export class OwnWrites {
  readonly #writes = new Map<string, OwnWrite>();
  /** the sequence of the last record read per object: where a write's event is looked for after */
  readonly #lastRead = new Map<string, number>();
  /** per primary, its reconciles' own writes not yet handed down in an outcome record */
  readonly #unrecorded = new Map<string, Map<string, HandedDownWrite>>();

  constructor(
    private readonly capacity = 50_000,
    /** journal own writes per primary for its outcome records (no one reads them without a watcher) */
    private readonly handsDown = true,
  ) {}

  /** A read answered `seq` for the object (kept to know where a following write's event comes after). */
  read(key: ObjectKey, seq: number): void {
    bounded(this.#lastRead, keyString(key), seq, this.capacity);
  }

  /**
   * This process wrote the object and the apiserver answered `written`, in a
   * reconcile of `primary` (whose outcome record hands the write down).
   */
  wrote(
    key: ObjectKey,
    written: { readonly metadata: { readonly uid: string; readonly resourceVersion: string } },
    path: string,
    primary?: ObjectKey,
  ): void {
    const { uid, resourceVersion } = written.metadata;
    this.#remember(key, { uid, resourceVersion, path }, primary);
  }

  /**
   * This process deleted the object (`uid`; the apiserver's answer may not
   * say), in a reconcile of `primary`: a record of it alive, from before the
   * deletion, is stale; no record, its deletion, or a later object is fresh.
   */
  deleted(key: ObjectKey, uid: string | undefined, path: string, primary?: ObjectKey): void {
    this.#remember(key, { deleted: true, uid: uid ?? '', resourceVersion: '', path }, primary);
  }

  #remember(
    key: ObjectKey,
    write: Pick<OwnWrite, 'deleted' | 'uid' | 'resourceVersion' | 'path'>,
    primary: ObjectKey | undefined,
  ): void {
    const id = keyString(key);
    const own: OwnWrite = { ...write, after: this.#lastRead.get(id) ?? 0 };
    bounded(this.#writes, id, own, this.capacity);
    if (primary === undefined || !this.handsDown) return;
    const of = keyString(primary);
    const unrecorded = this.#unrecorded.get(of) ?? new Map<string, HandedDownWrite>();
    // the latest write of each object, the most recent last
    bounded(unrecorded, id, { key, ...own }, JOURNALED_PER_PRIMARY);
    bounded(this.#unrecorded, of, unrecorded, this.capacity);
  }

  /** The own writes of `primary`'s reconciles since the last call: what its outcome record hands down. */
  handDown(primary: ObjectKey): HandedDownWrite[] {
    const of = keyString(primary);
    const unrecorded = this.#unrecorded.get(of);
    if (unrecorded === undefined) return [];
    this.#unrecorded.delete(of);
    return [...unrecorded.values()];
  }

  /**
   * The operator's latest own write of the object as its outcome records
   * tell (the last of them, whichever process made it): what this process
   * remembers of it from now on, unless that is the same write (what it
   * learned of it, where the bus carried it, stays).
   */
  inherit(write: HandedDownWrite): void {
    const id = keyString(write.key);
    const known = this.#writes.get(id);
    if (
      known !== undefined &&
      known.uid === write.uid &&
      known.resourceVersion === write.resourceVersion &&
      (known.deleted === true) === (write.deleted === true)
    )
      return;
    bounded(
      this.#writes,
      id,
      {
        ...(write.deleted === true ? { deleted: true } : {}),
        uid: write.uid,
        resourceVersion: write.resourceVersion,
        path: write.path,
        after: write.after,
      },
      this.capacity,
    );
  }

  /** Whether `recorded` (what the bus answered) is at least the own last write of the object. */
  freshness(key: ObjectKey, recorded: RecordedRevision | undefined): Freshness {
    const own = this.#writes.get(keyString(key));
    if (own === undefined) return 'fresh';
    // no record of an object this process deleted: as it is
    if (recorded === undefined) return own.deleted === true ? 'fresh' : 'stale';
    if (own.seen !== undefined) return recorded.seq >= own.seen ? 'fresh' : 'stale';
    if (isOwnWrite(own, recorded)) {
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
        if (!isOwnWrite(own, revision)) return false;
        own.seen = revision.seq;
        return true;
      },
      fellBack: (seq) => {
        own.fellBackAt = seq;
      },
      answered: (current, seq) => {
        // the apiserver's answer is at least the own write: the bus need catch up
        // only to it from now on, not to a revision it may never carry (a relist
        // publishes only the latest, an aged-out record is gone for good). Gone,
        // the object's deletion is what the bus must show: a record of it alive
        // up to here is older than the answer.
        if (current === undefined) {
          own.deleted = true;
          own.resourceVersion = '';
        } else {
          delete own.deleted;
          own.uid = current.metadata.uid;
          own.resourceVersion = current.metadata.resourceVersion;
        }
        own.after = Math.max(own.after, seq);
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

/**
 * Whether the record carries the own write: the revision written, or for a
 * deletion the object going or another object after it.
 */
function isOwnWrite(own: OwnWrite, recorded: RecordedRevision): boolean {
  if (own.deleted !== true)
    return recorded.uid === own.uid && recorded.resourceVersion === own.resourceVersion;
  // which object was deleted is not known: only a record of a deletion shows it
  if (own.uid === '') return recorded.gone === true;
  return (
    (recorded.uid === own.uid && recorded.gone === true) ||
    (recorded.uid !== own.uid && recorded.seq > own.after)
  );
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
