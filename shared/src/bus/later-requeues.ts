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
import type { Failures } from '../runtime/work-item.js';
import { durableNames } from './durable-consumers.js';
import { partitionOf, subjects } from './subjects.js';
import { Streams } from './topology.js';
import { encodeWorkMark, parseWorkMark } from './work-mark.js';

/** When the requeue is due, in ms since the epoch. */
export const DUE_HEADER = 'Kubebus-Due';

/** Shorter waits keep their delivery: a slot held for a moment stops nothing. */
export const LATER_MIN_DELAY_MS = 1_000;

/** How many waiting requeues one pull asks for (nats-server serves them as they come due). */
const PULL = 100;

/** A failed hand-on is tried again after this long. */
const RETRY_MS = 1_000;

export class LaterRequeues {
  #messages: ConsumerMessages | undefined;
  #loop: Promise<void> | undefined;

  constructor(
    private readonly js: JetStreamClient,
    private readonly controller: string,
    private readonly partitions: number,
    private readonly log: Logger,
  ) {}

  /** Parks the object's requeue until `delayMs` from now; resolves once stored. */
  async park(
    key: ObjectKey,
    delayMs: number,
    traceparent?: string,
    failures?: Failures,
  ): Promise<void> {
    const headers = natsHeaders();
    headers.set(DUE_HEADER, String(Date.now() + delayMs));
    await this.js
      .publish(
        subjects.later(this.controller, key),
        encodeWorkMark({
          key,
          reason: 'requeue',
          ...(traceparent === undefined ? {} : { traceparent }),
          time: new Date().toISOString(),
          ...(failures === undefined ? {} : { failures }),
        }),
        { headers },
      )
      .catch((error: unknown) => {
        // the work stream full, NATS away: the request keeps its delivery and waits there
        this.log.warn({ err: error, key }, 'could not park a requeue; it waits in its delivery');
        throw error;
      });
  }

  /** Pulls the waiting requeues and hands on each when due, until stopped. */
  async start(): Promise<void> {
    const consumer = await this.js.consumers.get(Streams.work, durableNames.later(this.controller));
    this.#messages = await consumer.consume({ max_messages: PULL });
    this.#loop = this.#handOnAll(this.#messages);
  }

  async stop(): Promise<void> {
    this.#messages?.stop();
    await this.#loop;
  }

  async #handOnAll(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const message of messages) await this.#handOn(message);
    } catch (error) {
      this.log.error({ err: error }, 'the waiting requeues are no longer pulled');
    }
  }

  async #handOn(message: JsMsg): Promise<void> {
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
    try {
      // the id dedupes a hand-on sent again after a restart that lost its ack
      await this.js.publish(
        subjects.work(this.controller, partitionOf(key, this.partitions), key),
        message.data,
        { msgID: `${this.controller}/requeue/${String(message.seq)}` },
      );
      message.ack();
    } catch (error) {
      this.log.warn({ err: error, key }, 'could not hand on a requeue; will try again');
      message.nak(RETRY_MS);
    }
  }
}
