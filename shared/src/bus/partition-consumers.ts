// The JetStream side of a partitioned work queue: for each partition this
// replica holds, a durable pull consumer with explicit acks whose messages
// become WorkItems for the runtime's Controller. The consumers are the
// topology step's (durable-consumers.ts; openConsumers made sure they exist):
// here they are only got, so the service's NATS user needs no right to create
// or delete one.
import type { ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../obs/logger.js';
import type { ObjectKey } from '../runtime/object-key.js';
import type { WorkItem } from '../runtime/work-item.js';

export type ParsedRequest =
  | {
      readonly ok: true;
      readonly key: ObjectKey;
      readonly traceparent?: string;
      readonly eventId?: string;
    }
  | { readonly ok: false; readonly reason: string };

export interface PartitionConsumerOptions {
  readonly stream: string;
  /** the partition's durable consumer (durableNames in durable-consumers.ts) */
  readonly durable: (partition: number) => string;
  /** what the partition's consumer filters (as the topology step created it) */
  readonly filterOf: (partition: number) => string;
  readonly ackWaitMs: number;
  readonly maxAckPending: number;
  readonly parse: (message: JsMsg) => ParsedRequest;
  readonly dispatch: (item: WorkItem) => void;
  /** a message that is not a valid request: park it (DLQ); it is then terminated */
  readonly onMalformed: (message: JsMsg, reason: string) => Promise<void>;
  readonly log: Logger;
}

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
    const messages = await consumer.consume({
      max_messages: Math.min(100, this.options.maxAckPending),
    });
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
        this.options.dispatch(toWorkItem(message, parsed));
      }
    } catch (error) {
      this.options.log.error({ partition, err: error }, 'partition consumer stopped');
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

function toWorkItem(message: JsMsg, parsed: Extract<ParsedRequest, { ok: true }>): WorkItem {
  return {
    key: parsed.key,
    id: `${message.info.stream}:${message.seq}`,
    enqueuedAt: Math.floor(message.info.timestampNanos / 1_000_000),
    ...(parsed.traceparent === undefined ? {} : { traceparent: parsed.traceparent }),
    ...(parsed.eventId === undefined ? {} : { eventId: parsed.eventId }),
    body: message.data,
    ack: () => {
      message.ack();
    },
    retry: (delayMs) => {
      message.nak(delayMs);
    },
    terminate: (reason) => {
      message.term(reason);
    },
    inProgress: () => {
      message.working();
    },
  };
}
