// The external calls (ctx.once) an operator made, recorded on the bus by
// object uid and idempotency key in the operator's own bucket (ADR 0035): a
// reconcile that reaches the same ctx.once again — a retry, a later change,
// the resync, a restart, another replica — finds the record and does not
// call again.
//
// A call is claimed before it is made (compare-and-set: one claimant wins)
// and recorded made right after. A claim the bucket refuses makes no call; a
// young claim of another reconcile is a call in flight, waited for; an old
// one is a reconcile that stopped between the call and its record, taken
// over — the window `done` (asking the receiver) closes. When the bus records
// an object's deletion, its records go (one purge by subject, no markers),
// and a new life of its name that claims a call purges any earlier life's
// (a deletion whose reconcile found the name re-created): the bucket holds
// the records of live objects.
import { createHash } from 'node:crypto';
import { JetStreamApiCodes, JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { z } from 'zod';
import { opOf } from '../events/kube-event.js';
import { decodeNatsMessage } from '../events/nats-binding.js';
import type { Logger } from '../obs/logger.js';
import type { ObjectKey } from '../runtime/object-key.js';
import { jsonOf } from './json-message.js';
import { subjects } from './subjects.js';
import { Streams, performedBucketOf } from './topology.js';
import { isPermissionRefusal } from './topology-apply.js';

/** What this process remembers of the calls it made when the bucket refused their record. */
const REMEMBERED_LOCALLY = 10_000;
/** The lives whose earlier lives this process already swept (no second look) */
const SWEPT_LIVES = 10_000;

/**
 * How old another reconcile's claim must be before it is taken over, by
 * default (KUBEBUS_ONCE_CLAIM_TIMEOUT): older than a reconcile's calls may
 * run (in-flight-calls.ts, 30 s) — younger, the call may still be under way
 * in another process (a moved partition, a Knative pod), and is waited for.
 */
export const CLAIM_TAKEOVER_MS = 60_000;

/**
 * The calls one life of an object may have recorded, by default
 * (KUBEBUS_ONCE_MAX_PER_OBJECT): past it, a new call is refused. The bucket
 * is the operator's, shared by all its objects: a key that changes with each
 * generation accumulates, and a tenant editing its object in a loop would
 * otherwise fill it for every other object (about 160 bytes a record:
 * 1,000 are a quarter of a percent of the 64 MiB default).
 */
export const MAX_CALLS_PER_OBJECT = 1_000;

const RecordSchema = z.object({
  state: z.enum(['claimed', 'made']),
  /** when the call was first claimed: what replay compares a revision's time with */
  at: z.iso.datetime(),
  /** made by `perform`, or found made by the receiver (`done`) */
  by: z.enum(['perform', 'done']).optional(),
});
export type PerformedRecord = z.infer<typeof RecordSchema>;

/**
 * A new call of an object that holds as many records as one may: no call is
 * made, its claim is gone. The object's doing (its keys), not retried by time.
 */
export class TooManyCalls extends Error {
  override readonly name = 'TooManyCalls';
}

/** How a PerformedCalls behaves (the defaults are the service's). */
export interface PerformedOptions {
  /** how old another reconcile's claim must be to be taken over */
  readonly takeoverMs?: number;
  /** the calls one life of an object may have recorded */
  readonly maxPerObject?: number;
  /** what became of each attempt (kubebus_once_calls_total) */
  readonly count?: (outcome: OnceOutcome) => void;
}

/** A claim this reconcile holds, or the record that made one unnecessary. */
export type Claim =
  | {
      readonly state: 'claimed';
      readonly record: PerformedRecord;
      readonly revision: number;
      readonly tookOver: boolean;
    }
  | { readonly state: 'made'; readonly record: PerformedRecord };

/**
 * Another reconcile claimed the call a moment ago: it may be making it.
 * Looked at again once its claim may be taken over (`waitMs`), not counted.
 */
export class CallInFlight extends Error {
  override readonly name = 'CallInFlight';
  constructor(
    message: string,
    readonly waitMs: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * What became of a ctx.once attempt, as `kubebus_once_calls_total` counts
 * it: made (recorded after `perform`), answered_done (the receiver had it),
 * found_made (recorded before: no call), waited (another reconcile's claim in
 * flight: retried later), refused (the bucket refused the claim: no call,
 * retried), released (`perform` or `done` threw), unrecorded (made, and the
 * bucket refused the record). A takeover (an old claim of a reconcile that
 * stopped between its call and its record) is counted apart, as the attempt
 * that took over ends one of these ways too.
 */
export type OnceOutcome =
  | 'made'
  | 'answered_done'
  | 'found_made'
  | 'waited'
  | 'refused'
  | 'released'
  | 'unrecorded'
  | 'taken_over';

/** A call: the object (its key and this life's uid) and the idempotency key. */
export interface CallRef {
  readonly object: ObjectKey;
  readonly uid: string;
  readonly idempotencyKey: string;
}

const digest = (text: string, length: number) =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

/**
 * The subject tokens of an object's life: its key, then its uid. Its records
 * are purged together, and only a life of that key: a deletion event naming
 * another object's uid purges nothing of it.
 */
function lifeTokens(object: ObjectKey, uid: string): string {
  return `${objectToken(object)}.${digest(uid, 24)}`;
}

function objectToken(object: ObjectKey): string {
  return digest(`${object.group}/${object.resource}/${object.namespace}/${object.name}`, 24);
}

/** How the bucket's lives are counted, and those that are over leave it (`PerformedCalls.of`). */
export interface LifePurges {
  /** the calls this life of the object has recorded, claims included */
  recorded(call: CallRef): Promise<number>;
  /** a claim released, taken out up to its sequence: no delete marker left to count */
  drop(call: CallRef, revision: number): Promise<void>;
  /** the object the bus recorded deleted: the records of the life it deleted */
  deleted(key: ObjectKey): Promise<void>;
  /** a life of the name claims a call: the records of any other life of the name */
  earlier(call: CallRef): Promise<void>;
}

/** The bucket key of a call: `<key digest>.<uid digest>.<call digest>` (keys are any text). */
export function performedKey(call: CallRef): string {
  return `${lifeTokens(call.object, call.uid)}.${digest(call.idempotencyKey, 40)}`;
}

export class PerformedCalls {
  /** calls made whose record the bucket refused: this process does not make them again */
  readonly #unrecorded = new Map<string, PerformedRecord>();
  /** lives (lifeTokens) whose name this process swept of earlier lives */
  readonly #swept = new Set<string>();

  readonly #takeoverMs: number;
  readonly #maxPerObject: number;
  readonly #count: (outcome: OnceOutcome) => void;

  constructor(
    private readonly kv: Pick<KV, 'get' | 'put' | 'create' | 'update' | 'delete'>,
    /** counts lives and purges those that are over; undefined for a reader (replay) */
    private readonly purge: LifePurges | undefined,
    private readonly log: Logger,
    options: PerformedOptions = {},
  ) {
    this.#takeoverMs = options.takeoverMs ?? CLAIM_TAKEOVER_MS;
    this.#maxPerObject = options.maxPerObject ?? MAX_CALLS_PER_OBJECT;
    this.#count = options.count ?? (() => undefined);
  }

  /**
   * Over an operator's bucket, with the JetStream manager that reads deletions
   * and purges, and the apiserver's word on which life of a name is there now
   * (`liveUid`: its uid, undefined when there is none; a throw purges nothing).
   */
  static of(
    kv: KV,
    jsm: Pick<JetStreamManager, 'streams'>,
    controller: string,
    liveUid: (key: ObjectKey) => Promise<string | undefined>,
    log: Logger,
    options: PerformedOptions = {},
  ) {
    const bucket = performedBucketOf(controller);
    const stream = `KV_${bucket}`;
    return new PerformedCalls(
      kv,
      {
        async drop(call, revision) {
          // a stream purge leaves no marker (a KV delete would); up to this claim only, so a
          // takeover's newer claim of the key stays. The NATS user may purge this bucket
          await jsm.streams.purge(stream, {
            filter: `$KV.${bucket}.${performedKey(call)}`,
            seq: revision + 1,
          });
        },
        async recorded(call) {
          const { state } = await jsm.streams.info(stream, {
            subjects_filter: `$KV.${bucket}.${lifeTokens(call.object, call.uid)}.>`,
          });
          return Object.keys(state.subjects ?? {}).length;
        },
        async deleted(key) {
          // only on the bus' word that it is gone (its last record a deletion), and
          // only that life's: a read that found nothing (a refusal, a version not
          // served yet) or a re-created object of the name purges nothing
          const last = await jsm.streams.getMessage(Streams.events, {
            last_by_subj: subjects.event(key),
          });
          const uid = last === null ? undefined : deletedUid(last.data, last.header);
          if (uid === undefined) return;
          // and the apiserver's: an event any watcher of the kind may publish is not proof
          // enough to forget calls (a forged deletion would have them made again)
          if ((await liveUid(key)) === uid) return;
          await jsm.streams.purge(stream, { filter: `$KV.${bucket}.${lifeTokens(key, uid)}.>` });
        },
        async earlier(call) {
          // names can be used again, uids never: a life other than the one the bus
          // last recorded is over. Only on the bus' word that this is that life (a
          // claim of an older one — a revoked reconcile — sweeps nothing)
          const last = await jsm.streams.getMessage(Streams.events, {
            last_by_subj: subjects.event(call.object),
          });
          if (last === null || !isLiveEventOf(last.data, last.header, call.uid)) return;
          const prefix = `$KV.${bucket}.${objectToken(call.object)}.`;
          const own = digest(call.uid, 24);
          const { state } = await jsm.streams.info(stream, { subjects_filter: `${prefix}>` });
          const lives = new Set(
            Object.keys(state.subjects ?? {}).map((s) =>
              s.slice(prefix.length, prefix.length + 24),
            ),
          );
          lives.delete(own);
          if (lives.size === 0) return;
          // the apiserver's word too, asked only when there is something to purge: a
          // forged event of another uid must not make the live object's calls forgotten
          if ((await liveUid(call.object)) !== call.uid) return;
          for (const life of lives)
            await jsm.streams.purge(stream, { filter: `${prefix}${life}.>` });
        },
      },
      log,
      options,
    );
  }

  /**
   * The record of the call, or undefined when none was claimed. Throws when
   * the bucket cannot be read: not knowing is not "not made".
   */
  async find(call: CallRef): Promise<PerformedRecord | undefined> {
    const key = performedKey(call);
    const local = this.#unrecorded.get(key);
    if (local !== undefined) {
      // the bucket may take it now (NATS back)
      void this.#write(key, local).then(
        () => this.#unrecorded.delete(key),
        () => undefined,
      );
      this.#count('found_made');
      return local;
    }
    const entry = await this.kv.get(key);
    const record = entry === null || entry.operation !== 'PUT' ? undefined : recordOf(entry);
    if (record?.state === 'made') this.#count('found_made');
    return record;
  }

  /**
   * Claims the call before it is made: one reconcile wins. Answers the claim,
   * or the record if the call was made meanwhile; throws CallInFlight for a
   * young claim of another reconcile, and any refusal of the bucket (no call
   * is made then). A claim's age is the server's: the time it was last
   * written (a takeover writes it again), not a claimant's clock.
   */
  async claim(call: CallRef): Promise<Claim> {
    const key = performedKey(call);
    await this.#withinBound(call);
    const record: PerformedRecord = { state: 'claimed', at: new Date().toISOString() };
    for (let tries = 1; ; tries++) {
      try {
        const revision = await this.kv.create(key, JSON.stringify(record));
        await this.#forgetEarlierLives(call);
        return { state: 'claimed', record, revision, tookOver: false };
      } catch (error) {
        if (!isContention(error)) throw this.#refused(error);
      }
      const entry = await this.kv.get(key);
      // released or purged between the two: claimed again, once
      if (entry === null || entry.operation !== 'PUT') {
        if (tries < 2) continue;
        this.#count('waited');
        throw new CallInFlight(`the external call ${call.idempotencyKey} is contended`, 500);
      }
      const found = recordOf(entry);
      if (found.state === 'made') {
        this.#count('found_made');
        return { state: 'made', record: found };
      }
      const age = Date.now() - entry.created.getTime();
      if (age < this.#takeoverMs) {
        this.#count('waited');
        throw new CallInFlight(
          `the external call ${call.idempotencyKey} was claimed ${String(Math.round(age / 1000))} s ago by another reconcile, which may be making it`,
          this.#takeoverMs - age + 250,
        );
      }
      // a reconcile that stopped between the call and its record: taken over by one
      const takenOver: PerformedRecord = { state: 'claimed', at: found.at };
      try {
        const revision = await this.kv.update(key, JSON.stringify(takenOver), entry.revision);
        this.#count('taken_over');
        return { state: 'claimed', record: takenOver, revision, tookOver: true };
      } catch (error) {
        if (!isContention(error)) throw this.#refused(error);
        this.#count('waited');
        throw new CallInFlight(
          `the external call ${call.idempotencyKey} was taken over by another reconcile meanwhile`,
          this.#takeoverMs,
          { cause: error },
        );
      }
    }
  }

  /** The call failed before it was made (`perform` threw): its claim goes, the retry is a first try. */
  async release(call: CallRef, claim: Claim): Promise<void> {
    if (claim.state !== 'claimed') return;
    this.#count('released');
    // up to its sequence, so only this claim (a takeover wrote a newer one), and no marker
    await (
      this.purge === undefined
        ? this.kv.delete(performedKey(call), { previousSeq: claim.revision })
        : this.purge.drop(call, claim.revision)
    ).catch((error: unknown) => {
      this.log.warn(
        { err: error, idempotencyKey: call.idempotencyKey },
        'could not release the claim of a failed external call: the retry waits for it to age',
      );
    });
  }

  /**
   * The call was made (by `perform`, or the receiver had it: `done`). A record
   * the bucket refuses is kept in this process instead and logged: another
   * process finds the claim, waits it out, and asks `done` or calls again.
   */
  async made(call: CallRef, by: 'perform' | 'done', claim?: Claim): Promise<void> {
    const key = performedKey(call);
    const record: PerformedRecord = {
      state: 'made',
      at: claim?.record.at ?? new Date().toISOString(),
      by,
    };
    try {
      await this.#write(key, record);
      this.#count(by === 'done' ? 'answered_done' : 'made');
    } catch (error) {
      this.#count('unrecorded');
      if (this.#unrecorded.size >= REMEMBERED_LOCALLY) {
        const oldest = this.#unrecorded.keys().next();
        if (oldest.done !== true) this.#unrecorded.delete(oldest.value);
      }
      this.#unrecorded.set(key, record);
      this.log.error(
        { err: error, idempotencyKey: call.idempotencyKey },
        'an external call was made but could not be recorded on the bus: this process will not make it again, another replica finds it claimed',
      );
    }
  }

  /**
   * The object's reconcile found it gone: the records of the life the bus
   * recorded deleted go. A failure is logged, never the reconcile's: the
   * object is gone either way.
   */
  async forget(key: ObjectKey): Promise<void> {
    try {
      await this.purge?.deleted(key);
    } catch (error) {
      this.log.warn(
        { err: error, key },
        isPermissionRefusal(error)
          ? 'could not purge the records of a deleted object’s external calls: apply the NATS users `kubebus generate` writes for this version'
          : 'could not purge the records of a deleted object’s external calls',
      );
    }
  }

  /**
   * Before a claim writes anything: an object's life that holds as many
   * records as one may gets no new call (a retry of one it holds neither;
   * it is stuck either way). Concurrent claims may pass it by a few.
   */
  async #withinBound(call: CallRef): Promise<void> {
    if (this.purge === undefined) return;
    let recorded: number;
    try {
      recorded = await this.purge.recorded(call);
    } catch (error) {
      throw this.#refused(error);
    }
    if (recorded < this.#maxPerObject) return;
    // one of its own records (a claim left by a reconcile that stopped): not a new one
    let held: Awaited<ReturnType<KV['get']>>;
    try {
      held = await this.kv.get(performedKey(call));
    } catch (error) {
      // not knowing is not "not held": retried, never stopped for good
      throw this.#refused(error);
    }
    if (held?.operation === 'PUT') return;
    this.#count('refused');
    throw new TooManyCalls(
      `ctx.once(${JSON.stringify(call.idempotencyKey.slice(0, 200))}): this object has recorded ${String(recorded)} external calls, the most one may (KUBEBUS_ONCE_MAX_PER_OBJECT, ${String(this.#maxPerObject)}): no new one is made. A key that changes with each generation or status accumulates; key a call by what it does (a value that repeats), or raise the bound`,
    );
  }

  /** A claim the bucket refused (full, not allowed, NATS away): no call; counted and explained. */
  #refused(error: unknown): unknown {
    this.#count('refused');
    return explained(error);
  }

  /**
   * A first claim of a call: the records of an earlier life of the name go
   * (its deletion was reconciled with the name already re-created, so
   * `forget` never saw it gone) — looked at once per life in this process.
   * Logged, never the call's failure.
   */
  async #forgetEarlierLives(call: CallRef): Promise<void> {
    if (this.purge === undefined) return;
    const life = lifeTokens(call.object, call.uid);
    if (this.#swept.has(life)) return;
    try {
      await this.purge.earlier(call);
      if (this.#swept.size >= SWEPT_LIVES) this.#swept.clear();
      this.#swept.add(life);
    } catch (error) {
      this.log.warn(
        { err: error, idempotencyKey: call.idempotencyKey },
        'could not purge the records of an earlier object of this name',
      );
    }
  }

  async #write(key: string, record: PerformedRecord): Promise<void> {
    await this.kv.put(key, JSON.stringify(record));
  }
}

function recordOf(entry: { value: Uint8Array; created: Date }): PerformedRecord {
  const parsed = RecordSchema.safeParse(jsonOf(entry.value));
  // unreadable: a record all the same (written by a later version, say)
  return parsed.success ? parsed.data : { state: 'made', at: entry.created.toISOString() };
}

/** Another writer got there first (compare-and-set): JetStream's "wrong last sequence". */
function isContention(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/** A bucket refusal as the operator's admin can act on it. */
function explained(error: unknown): unknown {
  if (isPermissionRefusal(error))
    return new Error(
      'the NATS user may not record external calls (ctx.once) in its performed bucket: apply the NATS users `kubebus generate` writes for this version',
      { cause: error },
    );
  if (error instanceof Error && STORE_FULL.test(error.message))
    return new Error(
      "the operator's ctx.once bucket is full: no external call is made until it has room (a gone object's records are purged); give it more with `kubebus topology apply <operator> --storage performed=<size>`",
      { cause: error },
    );
  return error;
}

/** JetStream's refusals of a store past its bounds (discard new) or its account's. */
const STORE_FULL =
  /maximum (bytes|messages)|insufficient (storage )?resources|resource limits exceeded/i;

/** Whether a recorded event is of the object with this uid, and not its deletion. */
function isLiveEventOf(
  data: Uint8Array,
  headers: Parameters<typeof decodeNatsMessage>[1],
  uid: string,
): boolean {
  const decoded = decodeNatsMessage(data, headers);
  return decoded.ok && decoded.event.kbuid === uid && opOf(decoded.event) !== 'delete';
}

/** The uid of the object a recorded event deleted; undefined for any other event. */
function deletedUid(
  data: Uint8Array,
  headers: Parameters<typeof decodeNatsMessage>[1],
): string | undefined {
  const decoded = decodeNatsMessage(data, headers);
  return decoded.ok && opOf(decoded.event) === 'delete' ? decoded.event.kbuid : undefined;
}

/**
 * The records as a reconcile of a revision at `then` found them: a call made
 * by `perform` is made for a revision after its claim, not one before (that
 * revision's reconcile made it); one the receiver answered `done` for is made
 * either way; a claim alone is not made. Writes nothing (replay makes no
 * call, and records none).
 */
export function performedAsOf(
  calls: Pick<PerformedCalls, 'find'>,
  then: Date,
): Pick<PerformedCalls, 'find' | 'claim' | 'made' | 'release' | 'forget'> {
  const refused = () => Promise.reject(new Error('replay makes no external call'));
  return {
    find: async (call) => {
      const found = await calls.find(call);
      if (found?.state !== 'made') return undefined;
      if (found.by === 'done') return found;
      return Date.parse(found.at) < then.getTime() ? found : undefined;
    },
    claim: refused,
    made: refused,
    release: refused,
    forget: () => Promise.resolve(),
  };
}
