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
  type JsMsg,
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

/**
 * Reads `filter` of `stream` from `start`, oldest first, handing each message
 * to `take`. A failure of NATS on the way (a reconnect, the consumer dropped,
 * a message lost, the consumer limit reached) is a PassInterrupted: transient,
 * read again. What `take` throws is thrown as it is.
 */
export async function readOnePass(
  nc: NatsConnection,
  stream: string,
  filter: string,
  start: PassStart,
  take: (message: PassMessage) => void,
  options: PassOptions = {},
): Promise<PassResult> {
  const what = `reading ${filter} from ${stream}`;
  const info = await fromNats(what, async () =>
    (await jetstreamManager(nc, { checkAPI: false })).consumers.add(
      stream,
      passConsumer(filter, start),
    ),
  );
  let pending = info.num_pending;
  if (options.tooMany?.(pending) === true) return 'too-many';
  const consumer = jetstream(nc).consumers.getConsumerFromInfo(info);
  let delivered = 0;
  let idlePulls = 0;
  while (pending > 0) {
    const left =
      options.deadlineAt === undefined ? PULL_WAIT_MS : options.deadlineAt - performance.now();
    if (left <= 0) return 'late';
    const pulled = await fromNats(what, () =>
      pull(
        consumer,
        Math.min(pending, PULL_BATCH),
        left,
        options.deadlineAt !== undefined,
        (message) => {
          // with no acknowledgements nothing is sent again: a gap is a message lost
          if (message.info.deliverySequence !== delivered + 1)
            throw new PassInterrupted(
              `${what}: message ${String(delivered + 1)} of the pass was lost`,
            );
          delivered += 1;
          pending = message.info.pending;
          return {
            subject: message.subject,
            seq: message.seq,
            data: message.data,
            header: message.headers,
            storedAtMs: Math.floor(message.info.timestampNanos / 1e6),
          };
        },
        take,
      ),
    );
    if (pulled === 'late') return 'late';
    if (pulled > 0) {
      idlePulls = 0;
      continue;
    }
    // nothing came while some were pending: the stream's limits removed them, the
    // consumer is gone, or what the server sent was lost on the way
    idlePulls += 1;
    const now = await fromNats(what, () => consumer.info());
    if (now.delivered.consumer_seq !== delivered)
      throw new PassInterrupted(
        `${what}: ${String(now.delivered.consumer_seq - delivered)} messages of the pass were lost`,
      );
    pending = now.num_pending;
    if (pending > 0 && idlePulls > 1)
      throw new PassInterrupted(`${what}: ${String(pending)} pending, none delivered`);
  }
  return 'read';
}

/** What `take` threw: passed on as it is, not taken for a failure of NATS. */
class TakeFailed extends Error {
  constructor(readonly error: unknown) {
    super('the reader of the pass failed');
  }
}

/**
 * One pull of up to `batch` messages, each read by `read` and handed to
 * `take`; closed at the deadline ('late'). Answers how many came.
 */
async function pull(
  consumer: Consumer,
  batch: number,
  leftMs: number,
  bounded: boolean,
  read: (message: JsMsg) => PassMessage,
  take: (message: PassMessage) => void,
): Promise<number | 'late'> {
  const messages = await consumer.fetch({
    max_messages: batch,
    expires: Math.max(1_000, Math.min(PULL_WAIT_MS, leftMs)),
  });
  const state = { late: false };
  const endsAt = performance.now() + leftMs;
  const deadline = bounded
    ? setTimeout(() => {
        state.late = true;
        void messages.close();
      }, leftMs)
    : undefined;
  let took = 0;
  try {
    for await (const message of messages) {
      // a batch already here is handed over without a pause for the timer to fire
      if (bounded && performance.now() >= endsAt) {
        state.late = true;
        break;
      }
      const passed = read(message);
      took += 1;
      try {
        take(passed);
      } catch (error) {
        throw new TakeFailed(error);
      }
      if (message.info.pending === 0) break;
    }
  } finally {
    clearTimeout(deadline);
  }
  return state.late ? 'late' : took;
}

/** A NATS call of the pass: its failures are the pass interrupted (transient). */
async function fromNats<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof TakeFailed) throw error.error;
    if (error instanceof PassInterrupted || isPermissionViolation(error)) throw error;
    throw new PassInterrupted(
      `${what}: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
}

/** A user without the right to read: not waited out, it would wait forever. */
function isPermissionViolation(error: unknown): boolean {
  return error instanceof Error && /permissions? violation/i.test(`${error.name} ${error.message}`);
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
