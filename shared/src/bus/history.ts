// The recorded revisions of one object, oldest first: its history in
// KUBEBUS_EVENTS (as many as the stream keeps per object).
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { MsgHdrs, NatsConnection } from '@nats-io/nats-core';
import type { KubeCloudEvent } from '../events/kube-event.js';
import { decodeNatsMessage } from '../events/nats-binding.js';
import type { ObjectKey } from '../runtime/object-key.js';
import { subjects } from './subjects.js';
import { Streams } from './topology.js';

export interface Revision {
  /** the event's sequence in KUBEBUS_EVENTS */
  readonly seq: number;
  readonly event: KubeCloudEvent;
}

export interface StoredMessage {
  readonly seq: number;
  readonly data: Uint8Array;
  readonly header: MsgHdrs | undefined;
}

/**
 * Every message of `filter` in `stream` (or only the last of each subject),
 * oldest first, in one ordered-consumer pass.
 */
export async function readMessages(
  nc: NatsConnection,
  stream: string,
  filter: string,
  which: 'all' | 'last-per-subject' = 'all',
): Promise<StoredMessage[]> {
  const consumer = await jetstream(nc).consumers.get(stream, {
    filter_subjects: [filter],
    deliver_policy: which === 'all' ? DeliverPolicy.All : DeliverPolicy.LastPerSubject,
  });
  const messages: StoredMessage[] = [];
  if ((await consumer.info()).num_pending === 0) return messages;
  const iterator = await consumer.consume();
  for await (const message of iterator) {
    messages.push({ seq: message.seq, data: message.data, header: message.headers });
    if (message.info.pending === 0) break;
  }
  await iterator.close();
  return messages;
}

export async function readRevisions(nc: NatsConnection, key: ObjectKey): Promise<Revision[]> {
  const messages = await readMessages(nc, Streams.events, subjects.event(key));
  return messages.flatMap((message) => {
    const decoded = decodeNatsMessage(message.data, undefined);
    return decoded.ok ? [{ seq: message.seq, event: decoded.event }] : [];
  });
}
