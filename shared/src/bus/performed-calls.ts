// The external calls (ctx.once) a controller has made, recorded on the bus by
// idempotency key: a reconcile that reaches the same ctx.once again — a
// retry, a later change, the resync, a restart, another replica — finds the
// record and does not call again (ADR 0035). The record is written right
// after the call returns: a process that dies between the two calls again
// when its work is redelivered, the window `done` (asking the receiver) closes.
//
// Records expire with the bucket's max age: what a deleted object's calls left
// goes without a delete. A live object's record is written again when a
// reconcile finds it past half that age, so it outlives any object that is
// reconciled at least that often (the resync is hours).
import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import type { Logger } from '../obs/logger.js';

/** The default max age of a record, and so of the bucket (topology.ts). */
export const PERFORMED_MAX_AGE_MS = 30 * 24 * 3_600_000;

/** What this process remembers of the calls it made when the bucket refused a record. */
const REMEMBERED_LOCALLY = 10_000;

/** The bucket key of a call: the controller's prefix (its NATS user may write only there), then a digest. */
export function performedKey(controller: string, idempotencyKey: string): string {
  const digest = createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 40);
  return `${controller}.${digest}`;
}

export interface PerformedRecord {
  /** when the record was written */
  readonly at: Date;
}

export class PerformedCalls {
  /** calls made whose record the bucket refused: this process does not make them again */
  readonly #unrecorded = new Map<string, Date>();

  constructor(
    private readonly kv: Pick<KV, 'get' | 'put'>,
    private readonly controller: string,
    private readonly log: Logger,
    private readonly options: {
      readonly maxAgeMs?: number;
      /** false for a reader that may not write (replay, under the CLI's user) */
      readonly renew?: boolean;
    } = {},
  ) {}

  /**
   * The record of the call under `idempotencyKey`, or undefined when none was
   * made. Throws when the bucket cannot be read: not knowing is not "not made".
   */
  async find(idempotencyKey: string): Promise<PerformedRecord | undefined> {
    const local = this.#unrecorded.get(idempotencyKey);
    if (local !== undefined) return { at: local };
    const key = performedKey(this.controller, idempotencyKey);
    const entry = await this.kv.get(key);
    if (entry === null || entry.operation !== 'PUT') return undefined;
    const at = entry.created;
    // kept alive while its object is: written again past half its age
    const maxAgeMs = this.options.maxAgeMs ?? PERFORMED_MAX_AGE_MS;
    if (this.options.renew !== false && Date.now() - at.getTime() > maxAgeMs / 2)
      void this.kv.put(key, recordValue(idempotencyKey)).catch((error: unknown) => {
        this.log.debug({ err: error }, 'could not renew the record of an external call');
      });
    return { at };
  }

  /**
   * The call under `idempotencyKey` was made. A record the bucket refuses
   * (NATS away, the bucket full) is kept in this process instead and logged:
   * another process may make the call again.
   */
  async record(idempotencyKey: string): Promise<void> {
    try {
      await this.kv.put(performedKey(this.controller, idempotencyKey), recordValue(idempotencyKey));
      this.#unrecorded.delete(idempotencyKey);
    } catch (error) {
      this.#remember(idempotencyKey);
      this.log.error(
        { err: error, idempotencyKey },
        'an external call was made but could not be recorded on the bus: this process will not make it again, another replica may',
      );
    }
  }

  #remember(idempotencyKey: string): void {
    if (this.#unrecorded.size >= REMEMBERED_LOCALLY) {
      const oldest = this.#unrecorded.keys().next();
      if (oldest.done !== true) this.#unrecorded.delete(oldest.value);
    }
    this.#unrecorded.set(idempotencyKey, new Date());
  }
}

/** The key itself, for `nats kv get` readers; bounded (the key is the operator's). */
function recordValue(idempotencyKey: string): string {
  return JSON.stringify({ key: idempotencyKey.slice(0, 512) });
}

/**
 * The records as they were at `then`: what a reconcile of a revision recorded
 * then found made. Writes nothing (replay makes no call, and records none).
 */
export function performedAsOf(
  calls: Pick<PerformedCalls, 'find'>,
  then: Date,
): Pick<PerformedCalls, 'find' | 'record'> {
  return {
    find: async (idempotencyKey) => {
      const found = await calls.find(idempotencyKey);
      return found !== undefined && found.at < then ? found : undefined;
    },
    record: () => Promise.resolve(),
  };
}
