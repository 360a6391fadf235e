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
// an object's deletion, its records go (one purge by subject, no markers):
// the bucket holds the records of live objects.
import { createHash } from 'node:crypto';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { z } from 'zod';
import { opOf } from '../events/kube-event.js';
import { decodeNatsMessage } from '../events/nats-binding.js';
import type { Logger } from '../obs/logger.js';
import type { ObjectKey } from '../runtime/object-key.js';
import { subjects } from './subjects.js';
import { Streams, performedBucketOf } from './topology.js';
import { isPermissionRefusal } from './topology-apply.js';

/** What this process remembers of the calls it made when the bucket refused their record. */
const REMEMBERED_LOCALLY = 10_000;

/**
 * How old another reconcile's claim must be before it is taken over, by
 * default (KUBEBUS_ONCE_CLAIM_TIMEOUT): older than a reconcile's calls may
 * run (in-flight-calls.ts, 30 s) — younger, the call may still be under way
 * in another process (a moved partition, a Knative pod), and is waited for.
 */
export const CLAIM_TAKEOVER_MS = 60_000;

const RecordSchema = z.object({
  state: z.enum(['claimed', 'made']),
  /** when the call was first claimed: what replay compares a revision's time with */
  at: z.iso.datetime(),
  /** made by `perform`, or found made by the receiver (`done`) */
  by: z.enum(['perform', 'done']).optional(),
});
export type PerformedRecord = z.infer<typeof RecordSchema>;

/** A claim this reconcile holds, or the record that made one unnecessary. */
export type Claim =
  | {
      readonly state: 'claimed';
      readonly record: PerformedRecord;
      readonly revision: number;
      readonly tookOver: boolean;
    }
  | { readonly state: 'made'; readonly record: PerformedRecord };

/** Another reconcile claimed the call a moment ago: it may be making it. Retried, not counted. */
export class CallInFlight extends Error {
  override readonly name = 'CallInFlight';
}

/** The subject token of an object's life (its uid): its records are purged together. */
function objectToken(uid: string): string {
  return createHash('sha256').update(uid).digest('hex').slice(0, 32);
}

/** The bucket key of a call: `<uid digest>.<call digest>` (keys are the operator's, any text). */
export function performedKey(uid: string, idempotencyKey: string): string {
  const call = createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 40);
  return `${objectToken(uid)}.${call}`;
}

export class PerformedCalls {
  /** calls made whose record the bucket refused: this process does not make them again */
  readonly #unrecorded = new Map<string, PerformedRecord>();

  constructor(
    private readonly kv: Pick<KV, 'get' | 'put' | 'create' | 'update' | 'delete'>,
    /** purges the records of an object the bus recorded deleted; undefined for a reader (replay) */
    private readonly purge: ((key: ObjectKey) => Promise<void>) | undefined,
    private readonly log: Logger,
    private readonly takeoverMs: number = CLAIM_TAKEOVER_MS,
  ) {}

  /** Over an operator's bucket, with the JetStream manager that reads deletions and purges. */
  static of(
    kv: KV,
    jsm: Pick<JetStreamManager, 'streams'>,
    controller: string,
    log: Logger,
    takeoverMs = CLAIM_TAKEOVER_MS,
  ) {
    const bucket = performedBucketOf(controller);
    return new PerformedCalls(
      kv,
      async (key) => {
        // only on the bus' word that it is gone (its last record a deletion), and
        // only that life's: a read that found nothing (a refusal, a version not
        // served yet) or a re-created object of the name purges nothing
        const last = await jsm.streams.getMessage(Streams.events, {
          last_by_subj: subjects.event(key),
        });
        const uid = last === null ? undefined : deletedUid(last.data, last.header);
        if (uid === undefined) return;
        await jsm.streams.purge(`KV_${bucket}`, {
          filter: `$KV.${bucket}.${objectToken(uid)}.>`,
        });
      },
      log,
      takeoverMs,
    );
  }

  /**
   * The record of the call, or undefined when none was claimed. Throws when
   * the bucket cannot be read: not knowing is not "not made".
   */
  async find(uid: string, idempotencyKey: string): Promise<PerformedRecord | undefined> {
    const key = performedKey(uid, idempotencyKey);
    const local = this.#unrecorded.get(key);
    if (local !== undefined) {
      // the bucket may take it now (NATS back)
      void this.#write(key, local).then(
        () => this.#unrecorded.delete(key),
        () => undefined,
      );
      return local;
    }
    const entry = await this.kv.get(key);
    return entry === null || entry.operation !== 'PUT' ? undefined : recordOf(entry);
  }

  /**
   * Claims the call before it is made: one reconcile wins. Answers the claim,
   * or the record if the call was made meanwhile; throws CallInFlight for a
   * young claim of another reconcile, and any refusal of the bucket (no call
   * is made then).
   */
  async claim(uid: string, idempotencyKey: string): Promise<Claim> {
    const key = performedKey(uid, idempotencyKey);
    const record: PerformedRecord = { state: 'claimed', at: new Date().toISOString() };
    try {
      const revision = await this.kv.create(key, JSON.stringify(record));
      return { state: 'claimed', record, revision, tookOver: false };
    } catch (error) {
      const entry = await this.kv.get(key).catch(() => null);
      if (entry === null || entry.operation !== 'PUT') throw explained(error);
      const found = recordOf(entry);
      if (found.state === 'made') return { state: 'made', record: found };
      if (Date.now() - Date.parse(found.at) < this.takeoverMs)
        throw new CallInFlight(
          `the external call ${idempotencyKey} was claimed ${found.at} by another reconcile, which may be making it: retried`,
        );
      // a reconcile that stopped between the call and its record: taken over, once
      const takenOver: PerformedRecord = { state: 'claimed', at: found.at };
      const revision = await this.kv
        .update(key, JSON.stringify(takenOver), entry.revision)
        .catch((raced: unknown) => {
          throw new CallInFlight(`the external call ${idempotencyKey} was taken over meanwhile`, {
            cause: raced,
          });
        });
      return { state: 'claimed', record: takenOver, revision, tookOver: true };
    }
  }

  /** The call failed (`perform` threw): its claim goes, so the retry is a first try. */
  async release(uid: string, idempotencyKey: string, claim: Claim): Promise<void> {
    if (claim.state !== 'claimed') return;
    await this.kv
      .delete(performedKey(uid, idempotencyKey), { previousSeq: claim.revision })
      .catch((error: unknown) => {
        this.log.debug({ err: error }, 'could not release the claim of a failed external call');
      });
  }

  /**
   * The call was made (by `perform`, or the receiver had it: `done`). A record
   * the bucket refuses is kept in this process instead and logged: another
   * process finds the claim, waits it out, and asks `done` or calls again.
   */
  async made(
    uid: string,
    idempotencyKey: string,
    by: 'perform' | 'done',
    claim?: Claim,
  ): Promise<void> {
    const key = performedKey(uid, idempotencyKey);
    const record: PerformedRecord = {
      state: 'made',
      at: claim?.record.at ?? new Date().toISOString(),
      by,
    };
    try {
      await this.#write(key, record);
    } catch (error) {
      if (this.#unrecorded.size >= REMEMBERED_LOCALLY) {
        const oldest = this.#unrecorded.keys().next();
        if (oldest.done !== true) this.#unrecorded.delete(oldest.value);
      }
      this.#unrecorded.set(key, record);
      this.log.error(
        { err: error, idempotencyKey },
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
      await this.purge?.(key);
    } catch (error) {
      this.log.warn(
        { err: error, key },
        isPermissionRefusal(error)
          ? 'could not purge the records of a deleted object’s external calls: apply the NATS users `kubebus generate` writes for this version'
          : 'could not purge the records of a deleted object’s external calls',
      );
    }
  }

  async #write(key: string, record: PerformedRecord): Promise<void> {
    await this.kv.put(key, JSON.stringify(record));
  }
}

function recordOf(entry: { string(): string; created: Date }): PerformedRecord {
  const parsed = RecordSchema.safeParse(safeJson(entry.string()));
  // unreadable: a record all the same (written by a later version, say)
  return parsed.success ? parsed.data : { state: 'made', at: entry.created.toISOString() };
}

/** A bucket refusal as the operator's admin can act on it. */
function explained(error: unknown): unknown {
  return isPermissionRefusal(error)
    ? new Error(
        'the NATS user may not record external calls (ctx.once) in its performed bucket: apply the NATS users `kubebus generate` writes for this version',
        { cause: error },
      )
    : error;
}

/** The uid of the object a recorded event deleted; undefined for any other event. */
function deletedUid(
  data: Uint8Array,
  headers: Parameters<typeof decodeNatsMessage>[1],
): string | undefined {
  const decoded = decodeNatsMessage(data, headers);
  return decoded.ok && opOf(decoded.event) === 'delete' ? decoded.event.kbuid : undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
    find: async (uid, idempotencyKey) => {
      const found = await calls.find(uid, idempotencyKey);
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
