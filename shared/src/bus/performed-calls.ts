// The external calls (ctx.once) an operator made, recorded on the bus by
// object and idempotency key in the operator's own bucket (ADR 0035): a
// reconcile that reaches the same ctx.once again — a retry, a later change,
// the resync, a restart, another replica — finds the record and does not
// call again.
//
// A call is claimed before it is made and recorded made right after: a
// claim the bucket refuses (NATS away, the bucket full) makes no call; a
// claim found without its record is a process that stopped in between, the
// window `done` (asking the receiver) closes. When an object is gone for
// good, its records go with it (one purge by subject, no markers left): the
// bucket holds the records of live objects only.
import { createHash } from 'node:crypto';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { z } from 'zod';
import type { Logger } from '../obs/logger.js';
import type { ObjectKey } from '../runtime/object-key.js';
import { performedBucketOf } from './topology.js';
import { isPermissionRefusal } from './topology-apply.js';

/** What this process remembers of the calls it made when the bucket refused their record. */
const REMEMBERED_LOCALLY = 10_000;

const RecordSchema = z.object({
  state: z.enum(['claimed', 'made']),
  /** when the call was claimed: what replay compares a revision's time with */
  at: z.iso.datetime(),
  /** made by `perform`, or found made by the receiver (`done`) */
  by: z.enum(['perform', 'done']).optional(),
});
export type PerformedRecord = z.infer<typeof RecordSchema>;

/** The subject token of an object: its records are purged together when it is gone. */
function objectToken(object: ObjectKey): string {
  return createHash('sha256')
    .update(`${object.group}/${object.resource}/${object.namespace}/${object.name}`)
    .digest('hex')
    .slice(0, 32);
}

/** The bucket key of a call: `<object>.<call>`, digests (keys are the operator's, any text). */
export function performedKey(object: ObjectKey, idempotencyKey: string): string {
  const call = createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 40);
  return `${objectToken(object)}.${call}`;
}

export class PerformedCalls {
  /** calls made whose record the bucket refused: this process does not make them again */
  readonly #unrecorded = new Map<string, PerformedRecord>();

  constructor(
    private readonly kv: Pick<KV, 'get' | 'put'>,
    /** purges an object's records; undefined for a reader (replay) */
    private readonly purge: ((object: ObjectKey) => Promise<void>) | undefined,
    private readonly log: Logger,
  ) {}

  /** Over an operator's bucket, with the JetStream manager that purges it. */
  static of(kv: KV, jsm: Pick<JetStreamManager, 'streams'>, controller: string, log: Logger) {
    const bucket = performedBucketOf(controller);
    return new PerformedCalls(
      kv,
      async (object) => {
        await jsm.streams.purge(`KV_${bucket}`, {
          filter: `$KV.${bucket}.${objectToken(object)}.>`,
        });
      },
      log,
    );
  }

  /**
   * The record of the call, or undefined when none was claimed. Throws when
   * the bucket cannot be read: not knowing is not "not made".
   */
  async find(object: ObjectKey, idempotencyKey: string): Promise<PerformedRecord | undefined> {
    const key = performedKey(object, idempotencyKey);
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
    if (entry === null || entry.operation !== 'PUT') return undefined;
    const parsed = RecordSchema.safeParse(safeJson(entry.string()));
    // unreadable: a record all the same (written by a later version, say)
    return parsed.success ? parsed.data : { state: 'made', at: entry.created.toISOString() };
  }

  /** The call is about to be made: recorded first, or not made (throws). */
  async claim(object: ObjectKey, idempotencyKey: string): Promise<PerformedRecord> {
    const record: PerformedRecord = { state: 'claimed', at: new Date().toISOString() };
    try {
      await this.#write(performedKey(object, idempotencyKey), record);
    } catch (error) {
      // NATS users of an older version: say what to apply, not a bare violation
      if (isPermissionRefusal(error))
        throw new Error(
          'the NATS user may not record external calls (ctx.once) in its performed bucket: apply the NATS users `kubebus generate` writes for this version',
          { cause: error },
        );
      throw error;
    }
    return record;
  }

  /**
   * The call was made (by `perform`, or the receiver had it: `done`). A record
   * the bucket refuses is kept in this process instead and logged: another
   * process finds the claim and asks `done`, or calls again.
   */
  async made(
    object: ObjectKey,
    idempotencyKey: string,
    by: 'perform' | 'done',
    claimed?: PerformedRecord,
  ): Promise<void> {
    const key = performedKey(object, idempotencyKey);
    const record: PerformedRecord = {
      state: 'made',
      at: claimed?.at ?? new Date().toISOString(),
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

  /** The object is gone: its records go (a re-created object is another uid, other calls). */
  async forget(object: ObjectKey): Promise<void> {
    await this.purge?.(object);
  }

  async #write(key: string, record: PerformedRecord): Promise<void> {
    await this.kv.put(key, JSON.stringify(record));
  }
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
 * by `perform` is 'made' for a revision after its claim, not one before (that
 * revision's reconcile made it); one the receiver answered `done` for is made
 * either way. Writes nothing (replay makes no call, and records none).
 */
export function performedAsOf(
  calls: Pick<PerformedCalls, 'find'>,
  then: Date,
): Pick<PerformedCalls, 'find' | 'claim' | 'made' | 'forget'> {
  return {
    find: async (object, idempotencyKey) => {
      const found = await calls.find(object, idempotencyKey);
      if (found === undefined || found.by === 'done') return found;
      return Date.parse(found.at) < then.getTime() ? found : undefined;
    },
    claim: () => Promise.resolve({ state: 'claimed', at: new Date().toISOString() }),
    made: () => Promise.resolve(),
    forget: () => Promise.resolve(),
  };
}
