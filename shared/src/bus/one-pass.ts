// One pass over a stream's messages through an ephemeral pull consumer that
// the server forgets seconds after the pass. nats.js' ordered consumer stays
// on the server for five minutes after it is closed, and a runtime user may
// not delete consumers (ADR 0015): a list or a history read per reconcile
// piled them up towards the account's consumer limit (ADR 0032).
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type Consumer,
  type ConsumerConfig,
} from '@nats-io/jetstream';
import { nanos, nuid, type MsgHdrs, type NatsConnection } from '@nats-io/nats-core';
import { RequestTimedOut } from './inbox-requests.js';

/** Where the pass starts: every message, the last of each subject, a sequence, a moment. */
export type PassStart =
  'all' | 'last-per-subject' | { readonly seq: number } | { readonly ms: number };

export interface PassMessage {
  readonly subject: string;
  readonly seq: number;
  readonly data: Uint8Array;
  readonly header: MsgHdrs | undefined;
  readonly storedAtMs: number;
}

export type PassResult = 'read' | 'too-many' | 'late';

export interface PassOptions {
  /** asked once with the count to read before anything is: true reads nothing ('too-many') */
  readonly tooMany?: (pending: number) => boolean;
  /** when (performance.now()) the pass gives up: 'late' */
  readonly deadlineAt?: number;
}

/**
 * How long the server keeps the consumer with no pull request waiting on it:
 * past the pass, and past any pause of a loaded process between two pulls.
 */
export const PASS_IDLE_MS = 10_000;

/** Messages one pull asks for, and how long it waits for them. */
const PULL_BATCH = 512;
const PULL_WAIT_MS = 5_000;

/** A message of the pass did not arrive (a reconnect, the consumer dropped): read again. */
export class PassInterrupted extends RequestTimedOut {}

/** Reads `filter` of `stream` from `start`, oldest first, handing each message to `take`. */
export async function readOnePass(
  nc: NatsConnection,
  stream: string,
  filter: string,
  start: PassStart,
  take: (message: PassMessage) => void,
  options: PassOptions = {},
): Promise<PassResult> {
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const info = await jsm.consumers.add(stream, passConsumer(filter, start));
  let pending = info.num_pending;
  if (options.tooMany?.(pending) === true) return 'too-many';
  const consumer = jetstream(nc).consumers.getConsumerFromInfo(info);
  let delivered = 0;
  let idlePulls = 0;
  while (pending > 0) {
    const left =
      options.deadlineAt === undefined ? PULL_WAIT_MS : options.deadlineAt - performance.now();
    if (left <= 0) return 'late';
    const pull = await consumer.fetch({
      max_messages: Math.min(pending, PULL_BATCH),
      expires: Math.max(1_000, Math.min(PULL_WAIT_MS, left)),
    });
    let took = 0;
    for await (const message of pull) {
      // with no acknowledgements nothing is sent again: a gap is a message lost
      if (message.info.deliverySequence !== delivered + 1)
        throw new PassInterrupted(
          `reading ${filter} from ${stream}: message ${String(delivered + 1)} of the pass was lost`,
        );
      delivered += 1;
      took += 1;
      take({
        subject: message.subject,
        seq: message.seq,
        data: message.data,
        header: message.headers,
        storedAtMs: Math.floor(message.info.timestampNanos / 1e6),
      });
      pending = message.info.pending;
      if (pending === 0) break;
    }
    if (took > 0) {
      idlePulls = 0;
      continue;
    }
    // nothing came while some were pending: the stream's limits removed them, or the consumer is gone
    idlePulls += 1;
    pending = await stillPending(consumer, `reading ${filter} from ${stream}`);
    if (pending > 0 && idlePulls > 1)
      throw new PassInterrupted(
        `reading ${filter} from ${stream}: ${String(pending)} pending, none delivered`,
      );
  }
  return 'read';
}

async function stillPending(consumer: Consumer, what: string): Promise<number> {
  try {
    return (await consumer.info()).num_pending;
  } catch (error) {
    // dropped by the server: idle too long (a stalled process), or a restart
    throw new PassInterrupted(`${what}: the pass' consumer is gone (${String(error)})`);
  }
}

function passConsumer(filter: string, start: PassStart): Partial<ConsumerConfig> {
  return {
    name: `kubebus_pass_${nuid.next()}`,
    filter_subject: filter,
    ack_policy: AckPolicy.None,
    inactive_threshold: nanos(PASS_IDLE_MS),
    mem_storage: true,
    num_replicas: 1,
    ...startOf(start),
  };
}

function startOf(start: PassStart): Partial<ConsumerConfig> {
  if (start === 'all') return { deliver_policy: DeliverPolicy.All };
  if (start === 'last-per-subject') return { deliver_policy: DeliverPolicy.LastPerSubject };
  if ('seq' in start)
    return { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.seq };
  return {
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(start.ms).toISOString(),
  };
}
