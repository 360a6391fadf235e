// The JetStream side of a partitioned work queue: for each partition this
// replica holds, a durable pull consumer with explicit acks whose messages
// become WorkItems for the runtime's Controller. The consumers are the
// topology step's (durable-consumers.ts; openConsumers made sure they exist):
// here they are only got, so the service's NATS user needs no right to create
// or delete one.
import type { ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../obs/logger.js';
import type { ObjectKey } from '../runtime/object-key.js';
import type { Failures, WorkItem } from '../runtime/work-item.js';
import type { AnsweredDeliveries } from './answered-deliveries.js';
import { LATER_MIN_DELAY_MS, type LaterRequeues } from './later-requeues.js';
import type { WorkReason } from './work-mark.js';

/**
 * A bound on deliveries never answered (unanswered-deliveries.ts): a message
 * whose process died reconciling it `maxCrashes` times is parked, not
 * delivered again to crash the next replica.
 */
export interface CrashBound {
  readonly deliveries: AnsweredDeliveries;
  readonly maxCrashes: number;
  /** dead-letters the request and marks its object; throwing gives it back for later */
  readonly park: (item: WorkItem, crashes: number) => Promise<void>;
}

export type ParsedRequest =
  | {
      readonly ok: true;
      readonly key: ObjectKey;
      readonly traceparent?: string;
      readonly eventId?: string;
      readonly cause?: string;
      /** why the request was made: a retry that waits apart keeps it (a re-drive stays one) */
      readonly reason?: WorkReason;
      readonly failedBefore?: Failures;
    }
  | { readonly ok: false; readonly reason: string };

export interface PartitionConsumerOptions {
  readonly stream: string;
  /** the partition's durable consumer (durableNames in durable-consumers.ts) */
  readonly durable: (partition: number) => string;
  /** what the partition's consumer filters (as the topology step created it) */
  readonly filterOf: (partition: number) => string;
  readonly parse: (message: JsMsg) => ParsedRequest;
  readonly dispatch: (item: WorkItem) => void;
  /** a message that is not a valid request: park it (DLQ); it is then terminated */
  readonly onMalformed: (message: JsMsg, reason: string) => Promise<void>;
  /** park a request whose deliveries kept killing their process (none: no bound) */
  readonly crashBound?: CrashBound;
  /** where requeues wait without their delivery (none: nak'd with the delay) */
  readonly later?: LaterRequeues;
  readonly log: Logger;
}

/**
 * How many messages one pull asks for. The consumer's max_ack_pending still
 * bounds what is delivered and not yet answered; a pull larger than it
 * stands on nats-server and is served as answers free room, so nats.js pulls
 * again after a quarter of it instead of after every message (its threshold
 * is 75 % of the batch): one pull request per 25 messages, not one each.
 */
const STANDING_PULL = 100;

export class PartitionConsumers {
  readonly #active = new Map<number, { messages: ConsumerMessages; loop: Promise<void> }>();

  constructor(
    private readonly js: JetStreamClient,
    private readonly options: PartitionConsumerOptions,
  ) {}

  async start(partition: number): Promise<void> {
    if (this.#active.has(partition)) return;
    const consumer = await this.js.consumers.get(
      this.options.stream,
      this.options.durable(partition),
    );
    const messages = await consumer.consume({ max_messages: STANDING_PULL });
    const loop = this.#loop(partition, messages);
    this.#active.set(partition, { messages, loop });
  }

  /** Stops pulling from the partition; messages not yet acked return after ack_wait or a nak. */
  async stop(partition: number): Promise<void> {
    const active = this.#active.get(partition);
    if (active === undefined) return;
    this.#active.delete(partition);
    active.messages.stop();
    await active.loop;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#active.keys()].map((partition) => this.stop(partition)));
  }

  async #loop(partition: number, messages: ConsumerMessages): Promise<void> {
    try {
      for await (const message of messages) {
        const parsed = this.options.parse(message);
        if (!parsed.ok) {
          await this.#park(message, parsed.reason);
          continue;
        }
        const bound = this.options.crashBound;
        const { later } = this.options;
        if (bound === undefined) {
          this.options.dispatch(toWorkItem(message, parsed, undefined, later));
          continue;
        }
        const { suspect, crashes } = await bound.deliveries.assess(
          parsed.key,
          message.seq,
          message.info.deliveryCount,
        );
        const item = toWorkItem(
          message,
          parsed,
          { deliveries: bound.deliveries, crashes, suspect },
          later,
        );
        if (crashes < bound.maxCrashes) this.options.dispatch(item);
        else await this.#parkCrashing(bound, item, crashes);
      }
    } catch (error) {
      this.options.log.error({ partition, err: error }, 'partition consumer stopped');
    }
  }

  async #parkCrashing(bound: CrashBound, item: WorkItem, crashes: number): Promise<void> {
    try {
      await bound.park(item, crashes);
      item.terminate(`its process died while reconciling it ${crashes} times`);
    } catch (error) {
      this.options.log.error(
        { err: error, key: item.key, crashes },
        'could not park a request that kept killing its process; will try again',
      );
      item.retry(5_000);
    }
  }

  async #park(message: JsMsg, reason: string): Promise<void> {
    try {
      await this.options.onMalformed(message, reason);
      message.term(reason);
    } catch (error) {
      this.options.log.error(
        { err: error, subject: message.subject },
        'could not park a malformed message',
      );
      message.nak(5_000);
    }
  }
}

/** How a work item's deliveries are recorded, when deaths are bounded. */
interface Records {
  readonly deliveries: AnsweredDeliveries;
  /** deaths blamed on the message before this delivery */
  readonly crashes: number;
  /** an earlier delivery went unanswered: runs alone, its start recorded */
  readonly suspect: boolean;
}

function toWorkItem(
  message: JsMsg,
  parsed: Extract<ParsedRequest, { ok: true }>,
  records?: Records,
  waiting?: LaterRequeues,
): WorkItem {
  const { key } = parsed;
  const record = {
    seq: message.seq,
    delivery: message.info.deliveryCount,
    crashes: records?.crashes ?? 0,
  };
  const settle = () => records?.deliveries.settle(key, record.seq);
  // given back: recorded as answered first, so the delivery it causes blames nobody
  const giveBack = (nak: () => void) => {
    if (records === undefined) nak();
    else records.deliveries.answer(key, record, nak);
  };
  const deliveries = records?.suspect === true ? records.deliveries : undefined;
  return {
    key: parsed.key,
    id: `${message.info.stream}:${message.seq}`,
    enqueuedAt: Math.floor(message.info.timestampNanos / 1_000_000),
    ...(parsed.traceparent === undefined ? {} : { traceparent: parsed.traceparent }),
    ...(parsed.eventId === undefined ? {} : { eventId: parsed.eventId }),
    ...(parsed.cause === undefined ? {} : { cause: parsed.cause }),
    ...(parsed.failedBefore === undefined ? {} : { failedBefore: parsed.failedBefore }),
    body: message.data,
    ...(deliveries === undefined ? {} : { started: () => deliveries.start(key, record) }),
    ack: () => {
      message.ack();
      settle();
      waiting?.settled(key);
    },
    retry: (delayMs) => {
      giveBack(() => {
        message.nak(delayMs);
      });
    },
    later: (delayMs, failures) => {
      if (waiting?.pulling !== true || delayMs < LATER_MIN_DELAY_MS) {
        giveBack(() => {
          message.nak(delayMs);
        });
        return;
      }
      // a requeue the reconcile asked for is one; a retry is still what its request was
      const request =
        failures === undefined
          ? { reason: 'requeue' as const }
          : {
              reason: parsed.reason ?? ('requeue' as const),
              ...(parsed.eventId === undefined ? {} : { eventId: parsed.eventId }),
              ...(parsed.cause === undefined ? {} : { cause: parsed.cause }),
              failures,
            };
      // acknowledged once the requeue is stored: a crash between sends the request again
      waiting
        .park(key, delayMs, {
          ...request,
          ...(parsed.traceparent === undefined ? {} : { traceparent: parsed.traceparent }),
        })
        .then(
          () => {
            message.ack();
            settle();
          },
          () => {
            giveBack(() => {
              message.nak(delayMs);
            });
          },
        );
    },
    terminate: (reason) => {
      message.term(reason);
      settle();
      waiting?.settled(key);
    },
    inProgress: () => {
      message.working();
    },
  };
}
