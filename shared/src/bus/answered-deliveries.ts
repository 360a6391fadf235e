// The records of unanswered-deliveries.ts, kept where the next delivery of a
// message finds them: in this process (which may get the message back at
// once) and in the deliveries bucket (a replica started after a crash). A
// record is written before what it records happens — an answer before the
// nak, a suspect's start before its reconcile — so the delivery that follows
// finds it. A record the bucket refused (NATS down) can only blame less,
// never more: a lost start blames nobody, a lost answer makes the next
// delivery a suspect, not a death.
import type { KV } from '@nats-io/kv';
import type { Logger } from '../obs/logger.js';
import { keyString, type ObjectKey } from '../runtime/object-key.js';
import {
  DeliveryRecordSchema,
  assess,
  deliveryRecordKey,
  laterRecord,
  type Assessment,
  type DeliveryRecord,
} from './unanswered-deliveries.js';

export class AnsweredDeliveries {
  readonly #local = new Map<string, DeliveryRecord>();
  readonly #writes = new Set<Promise<void>>();

  constructor(
    private readonly kv: KV,
    private readonly controller: string,
    private readonly log: Logger,
  ) {}

  /** What delivery `delivery` of message `seq` is: a suspect or not, and the deaths blamed on it. */
  async assess(key: ObjectKey, seq: number, delivery: number): Promise<Assessment> {
    if (delivery <= 1) return { suspect: false, crashes: 0 };
    const local = this.#local.get(keyString(key));
    let stored: DeliveryRecord | undefined;
    try {
      const entry = await this.kv.get(deliveryRecordKey(this.controller, key));
      const parsed =
        entry === null || entry.operation !== 'PUT'
          ? undefined
          : DeliveryRecordSchema.safeParse(entry.json());
      stored = parsed?.success === true ? parsed.data : undefined;
    } catch (error) {
      // unknown blames nobody: this process' own record, if any, decides
      this.log.warn({ err: error, key }, 'could not read the record of a redelivered work mark');
    }
    const last = laterRecord(local, stored, seq);
    // known here from now on: settling the message removes the bucket's record too
    if (last !== undefined) this.#local.set(keyString(key), last);
    return assess(last, seq, delivery);
  }

  /** A suspect is about to run: recorded (awaited) before it does. */
  async start(key: ObjectKey, record: Omit<DeliveryRecord, 'started'>): Promise<void> {
    const started = { ...record, started: true };
    this.#local.set(keyString(key), started);
    await this.#track(
      this.kv.put(deliveryRecordKey(this.controller, key), JSON.stringify(started)),
    );
  }

  /** The delivery is being given back (nak): recorded first, then `giveBack` runs. */
  answer(key: ObjectKey, record: Omit<DeliveryRecord, 'started'>, giveBack: () => void): void {
    const answered = { ...record, started: false };
    this.#local.set(keyString(key), answered);
    void this.#track(
      this.kv
        .put(deliveryRecordKey(this.controller, key), JSON.stringify(answered))
        .catch((error: unknown) => {
          this.log.warn({ err: error, key }, 'could not record an answered delivery');
        })
        .then(() => {
          try {
            giveBack();
          } catch (error) {
            // the connection closed: the message comes back after its ack wait
            this.log.warn({ err: error, key }, 'could not give a work mark back');
          }
        }),
    ).catch(() => undefined);
  }

  /** Message `seq` is done with (acked, terminated): its record goes. */
  settle(key: ObjectKey, seq: number): void {
    const id = keyString(key);
    if (this.#local.get(id)?.seq !== seq) return;
    this.#local.delete(id);
    // a delete that fails leaves a record of a message that is gone: ignored, then expired
    void this.#track(this.kv.delete(deliveryRecordKey(this.controller, key))).catch(
      () => undefined,
    );
  }

  /** Waits for the records in flight (before the connection closes). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.#writes]);
  }

  #track(write: Promise<unknown>): Promise<void> {
    const done = write.then(() => undefined);
    this.#writes.add(done);
    void done
      .catch(() => undefined)
      .finally(() => {
        this.#writes.delete(done);
      });
    return done;
  }
}
