// Read-your-own-writes across owners (ADR 0019): the reconciler that takes a
// partition — after a restart, a crash or a hand-over — learns the own writes
// its operator made there, whichever process made them, from the outcome
// records of the last moments, before it consumes the partition's work.
// Without them its first reconciles would judge the bus against nothing and
// could read an owned object from before the operator's own last write of it.
//
// The partitions of one lease round are taken one after another while the
// leases wait: the records are read once and then only what came since
// (kept, the latest write per object), and each read is bounded in time.
// Where the records come from: outcome-records-since.ts.
import type { Logger } from '../obs/logger.js';
import { keyString, type ObjectKey } from '../runtime/object-key.js';
import { jsonOf } from './json-message.js';
import { OutcomeRecordSchema } from './outcomes.js';
import type { RecordsRead } from './outcome-records-since.js';
import type { HandedDownWrite, OwnWrites } from './own-writes.js';
import { keyOfSubject, partitionOf } from './subjects.js';

export interface HandedDownOptions {
  readonly partitions: number;
  /**
   * How far back: a write older than this had that long to reach the bus.
   * The outcome records of this window are read when a partition is taken.
   */
  readonly windowMs: number;
  /** at most about this many records are read at once (the window shrinks to the latest) */
  readonly maxRecords: number;
  /** a read stops after this long, with what it has (lease renewals wait for it) */
  readonly deadlineMs: number;
  readonly now?: () => number;
}

/** Objects whose latest recorded own write is kept, as many as OwnWrites keeps. */
const LATEST_CAPACITY = 50_000;

interface Latest {
  readonly write: HandedDownWrite;
  /** the partition of the primary whose reconcile made it */
  readonly partition: number;
  /** when its record was stored (ms) */
  readonly at: number;
}

export class HandedDownWrites {
  /** the latest recorded own write per object, from the records read so far */
  readonly #latest = new Map<string, Latest>();
  /** when the records were last read up to (ms), or undefined before the first read */
  #readAt: number | undefined;
  readonly #now: () => number;

  constructor(
    /** the operator's outcome records (outcomeRecordsSince) */
    private readonly records: RecordsRead,
    private readonly writes: OwnWrites,
    private readonly options: HandedDownOptions,
    private readonly log: Logger,
  ) {
    this.#now = options.now ?? Date.now;
  }

  /** Remembers the latest own writes recorded for `partition`'s objects; how many. */
  async inherit(partition: number): Promise<number> {
    await this.#readSince();
    let inherited = 0;
    for (const latest of this.#latest.values())
      if (latest.partition === partition) {
        this.writes.inherit(latest.write);
        inherited++;
      }
    return inherited;
  }

  /** Reads the records since the last read (with a second's overlap), or the whole window. */
  async #readSince(): Promise<void> {
    const { windowMs, maxRecords } = this.options;
    const started = this.#now();
    for (const [id, latest] of this.#latest)
      if (started - latest.at > windowMs) this.#latest.delete(id);
    let from =
      this.#readAt === undefined || started - this.#readAt > windowMs
        ? started - windowMs
        : this.#readAt - 1_000;
    for (;;) {
      const windowFrom = from;
      // more than it reads: the latest of them (an own write further back had longer to reach the bus)
      const tooMany = (count: number) => count > maxRecords && started - windowFrom > 2_000;
      const read = await this.records.read(
        from,
        tooMany,
        (subject, data, at) => {
          this.#take(keyOfSubject(subject), data, at);
        },
        started + this.options.deadlineMs,
      );
      if (read === 'too-many') {
        from = started - Math.floor((started - from) / 2);
        continue;
      }
      if (read === 'late')
        this.log.warn(
          { deadlineMs: this.options.deadlineMs },
          'reading the own writes to hand down took too long: the rest is not handed down',
        );
      this.#readAt = started;
      return;
    }
  }

  #take(primary: ObjectKey, data: Uint8Array, at: number): void {
    const parsed = OutcomeRecordSchema.safeParse(jsonOf(data));
    // not a record this version reads: nothing handed down
    if (!parsed.success) return;
    const partition = partitionOf(primary, this.options.partitions);
    // in the stream's order: a later record's write replaces an earlier one's
    for (const write of parsed.data.own ?? []) {
      const id = keyString(write.key);
      this.#latest.delete(id);
      this.#latest.set(id, { write, partition, at });
      // bounded like OwnWrites: the least recent go first
      if (this.#latest.size > LATEST_CAPACITY)
        this.#latest.delete(this.#latest.keys().next().value as string);
    }
  }
}
