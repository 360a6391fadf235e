// The recorded revisions of one object, oldest first: its history in
// KUBEBUS_EVENTS (as many as the stream keeps per object).
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { MsgHdrs, NatsConnection } from '@nats-io/nats-core';
import type { KubeCloudEvent } from '../events/kube-event.js';
import { decodeNatsMessage } from '../events/nats-binding.js';
import { RequestTimedOut } from './inbox-requests.js';
import type { ObjectKey } from '../runtime/object-key.js';
import { subjects } from './subjects.js';
import { Streams } from './topology.js';

export interface Revision {
  /** the event's sequence in KUBEBUS_EVENTS */
  readonly seq: number;
  readonly event: KubeCloudEvent;
}

export interface StoredMessage {
  readonly subject: string;
  readonly seq: number;
  readonly data: Uint8Array;
  readonly header: MsgHdrs | undefined;
}

/**
 * Every message of `filter` in `stream` (or only the last of each subject),
 * oldest first, in one ordered-consumer pass; with `deadlineMs`, a pass not
 * done by then fails (transient: NATS did not answer in time).
 */
export async function readMessages(
  nc: NatsConnection,
  stream: string,
  filter: string,
  which: 'all' | 'last-per-subject' = 'all',
  options: { readonly deadlineMs?: number } = {},
): Promise<StoredMessage[]> {
  const consumer = await jetstream(nc).consumers.get(stream, {
    filter_subjects: [filter],
    deliver_policy: which === 'all' ? DeliverPolicy.All : DeliverPolicy.LastPerSubject,
  });
  const messages: StoredMessage[] = [];
  if ((await consumer.info()).num_pending === 0) return messages;
  const iterator = await consumer.consume();
  // set by the timer: an object, so the check after the loop is not read as constant
  const pass = { late: false };
  const deadline =
    options.deadlineMs === undefined
      ? undefined
      : setTimeout(() => {
          pass.late = true;
          void iterator.close();
        }, options.deadlineMs);
  try {
    for await (const message of iterator) {
      messages.push({
        subject: message.subject,
        seq: message.seq,
        data: message.data,
        header: message.headers,
      });
      if (message.info.pending === 0) break;
    }
  } finally {
    clearTimeout(deadline);
    await iterator.close();
  }
  if (pass.late)
    throw new RequestTimedOut(
      `reading ${filter} from ${stream}: not done within ${String(options.deadlineMs)} ms`,
    );
  return which === 'all' ? messages : lastOfEach(messages);
}

/**
 * The last message of each subject: an ordered consumer that restarts after a
 * missed heartbeat or a reconnect goes on from a sequence, not per subject, and
 * one started per subject delivers what came since too.
 */
export function lastOfEach(messages: readonly StoredMessage[]): StoredMessage[] {
  const last = new Map<string, StoredMessage>();
  for (const message of messages) {
    const seen = last.get(message.subject);
    if (seen === undefined || seen.seq < message.seq) last.set(message.subject, message);
  }
  return [...last.values()].sort((a, b) => a.seq - b.seq);
}

export async function readRevisions(nc: NatsConnection, key: ObjectKey): Promise<Revision[]> {
  const messages = await readMessages(nc, Streams.events, subjects.event(key));
  return messages.flatMap((message) => {
    const decoded = decodeNatsMessage(message.data, undefined);
    return decoded.ok ? [{ seq: message.seq, event: decoded.event }] : [];
  });
}
