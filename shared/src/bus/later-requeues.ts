// Requeues that hold no delivery. A reconcile that asks to run again in an
// hour (`requeueAfterMs`) used to keep its request for that hour, nak'd with
// the delay: one of its partition's few delivery slots (max_ack_pending, a
// worker's share plus one), so a dozen such objects stopped their partitions
// and every new change behind them. Instead its mark waits on
// `kubebus.work.<controller>.later.<key>`, with the time it is due, and the
// request is acknowledged. Every replica pulls the operator's one consumer of
// them; nats-server holds each until it is due (a nak with what is left of
// the delay, again after a restart) and the replica that gets it then sends
// the mark on to the object's partition. One per object, as work marks: a
// later requeue replaces an earlier one, as the latest reconcile knows best,
// and a change meanwhile is reconciled at once, as any other (ADR 0034).
import type { ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import type { Logger } from '../obs/logger.js';
import type { ObjectKey } from '../kube/refs.js';
import { keyString } from '../runtime/object-key.js';
import { backoffDelay } from '../runtime/backoff.js';
import { durableNames } from './durable-consumers.js';
import { partitionOf, subjects } from './subjects.js';
import { Streams } from './topology.js';
import { encodeWorkMark, parseWorkMark, type WorkMark } from './work-mark.js';

/** When the requeue is due, in ms since the epoch. */
export const DUE_HEADER = 'Kubebus-Due';

/** A retry that waits no more: the object succeeded, or was parked, since. */
const CANCELLED_HEADER = 'Kubebus-Cancelled';

/** Shorter waits keep their delivery: a slot held for a moment stops nothing. */
export const LATER_MIN_DELAY_MS = 1_000;

/** How many waiting requeues one pull asks for (nats-server serves them as they come due). */
const PULL = 100;

/** A failed hand-on is tried again after this long. */
const RETRY_MS = 1_000;

/** What a waiting mark carries of the request it follows. */
export type Waiting = Pick<WorkMark, 'reason' | 'traceparent' | 'eventId' | 'cause' | 'failures'>;

export class LaterRequeues {
  #pulling = false;
  #stopped = false;
  #messages: ConsumerMessages | undefined;
  #loop: Promise<void> | undefined;
  /** ends the wait before the consumer is looked for again (stop) */
  #wake: (() => void) | undefined;
  /** objects whose retry this replica parked and has not settled since: a success cancels it */
  readonly #retries = new Set<string>();

  constructor(
    private readonly js: JetStreamClient,
    private readonly controller: string,
    private readonly partitions: number,
    private readonly log: Logger,
  ) {}

  /** Whether a replica pulls the waiting requeues: else they wait in their deliveries. */
  get pulling(): boolean {
    return this.#pulling;
  }

  /** Parks the object's requeue until `delayMs` from now; resolves once stored. */
  async park(key: ObjectKey, delayMs: number, waiting: Waiting): Promise<void> {
    const headers = natsHeaders();
    headers.set(DUE_HEADER, String(Date.now() + delayMs));
    await this.#publish(key, waiting, headers).catch((error: unknown) => {
      // the work stream full, NATS away: the request keeps its delivery and waits there
      this.log.warn({ err: error, key }, 'could not park a requeue; it waits in its delivery');
      throw error;
    });
    const id = keyString(key);
    if (waiting.failures === undefined) this.#retries.delete(id);
    else this.#retries.add(id);
  }

  /**
   * The object was reconciled (or parked, or failed for good): a retry this
   * replica parked for it would come back with failures that are no longer
   * its own, so it is replaced by a cancelled mark, which is dropped.
   */
  settled(key: ObjectKey): void {
    const id = keyString(key);
    if (!this.#retries.delete(id)) return;
    const headers = natsHeaders();
    headers.set(CANCELLED_HEADER, '1');
    this.#publish(key, { reason: 'requeue' }, headers).catch((error: unknown) => {
      // it comes back then: one reconcile more, its budget counted from the failures it carries
      this.log.warn({ err: error, key }, 'could not cancel a waiting retry');
    });
  }

  /** Pulls the waiting requeues and hands on each when due, until stopped; a missing consumer is waited for. */
  start(): void {
    this.#loop = this.#pullAll();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#messages?.stop();
    this.#wake?.();
    await this.#loop;
  }

  async #publish(key: ObjectKey, waiting: Waiting, headers: ReturnType<typeof natsHeaders>) {
    await this.js.publish(
      subjects.later(this.controller, key),
      encodeWorkMark({ key, ...waiting, time: new Date().toISOString() }),
      { headers },
    );
  }

  async #pullAll(): Promise<void> {
    for (let attempt = 0; !this.#stopped; attempt++) {
      try {
        const consumer = await this.js.consumers.get(
          Streams.work,
          durableNames.later(this.controller),
        );
        this.#messages = await consumer.consume({ max_messages: PULL });
        this.#pulling = true;
        attempt = 0;
        for await (const message of this.#messages) await this.#handOn(message);
      } catch (error) {
        if (attempt === 0)
          this.log.warn(
            { err: error, consumer: durableNames.later(this.controller) },
            'the waiting requeues are not pulled: each waits in its delivery until they are; run `kubebus topology apply <operator>` (the topology Job) if their consumer is missing',
          );
      }
      this.#pulling = false;
      // stop() may have come while the pull ran
      if (this.#isStopped()) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoffDelay({ baseMs: 1_000, capMs: 30_000 }, attempt));
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  #isStopped(): boolean {
    return this.#stopped;
  }

  async #handOn(message: JsMsg): Promise<void> {
    if (message.headers?.get(CANCELLED_HEADER) === '1') {
      message.ack();
      return;
    }
    const due = Number(message.headers?.get(DUE_HEADER));
    const left = Number.isFinite(due) ? due - Date.now() : 0;
    if (left > 0) {
      message.nak(left);
      return;
    }
    const parsed = parseWorkMark(message.data);
    if (!parsed.ok) {
      // only the reconciler's own user publishes here: nothing to reconcile, nothing lost
      this.log.warn({ subject: message.subject, reason: parsed.reason }, 'dropped a bad requeue');
      message.term(parsed.reason);
      return;
    }
    const { key } = parsed.mark;
    const partition = partitionOf(key, this.partitions);
    try {
      // the id dedupes a hand-on sent again after a restart that lost its ack
      await this.js.publish(subjects.work(this.controller, partition, key), message.data, {
        msgID: `${this.controller}/requeue/${String(message.seq)}/p${String(partition)}`,
      });
      message.ack();
    } catch (error) {
      this.log.warn({ err: error, key }, 'could not hand on a requeue; will try again');
      message.nak(RETRY_MS);
    }
  }
}
